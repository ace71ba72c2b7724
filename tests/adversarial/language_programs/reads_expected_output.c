// expect: failed
// technique: the program reads the expected output from the suite (/run/trusted, and through /proc/1/root) and prints it
#include <stdio.h>
int main(void) {
    const char *paths[] = {"/run/trusted/suite/cases/1.out", "/proc/1/root/run/trusted/suite/cases/1.out",
                           "/proc/1/cwd/suite/cases/1.out"};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(paths[i], "r");
        if (f) {
            int c;
            while ((c = fgetc(f)) != EOF) putchar(c);
            return 0;
        }
    }
    puts("nothing");
    return 0;
}
