/* A correct program that looks around first: prints its sum only when nothing of an earlier
   program is left (files in the scratch places, processes of its uid); else a wrong answer. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int extra_entries(const char *dir, const char *allowed1, const char *allowed2) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if ((allowed1 && !strcmp(e->d_name, allowed1)) || (allowed2 && !strcmp(e->d_name, allowed2))) continue;
        printf("LEFT %s/%s\n", dir, e->d_name);
        n++;
    }
    closedir(d);
    return n;
}
static int other_processes(void) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    char path[64], line[256];
    while (d && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == getpid()) continue;
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        while (fgets(line, sizeof line, f)) {
            unsigned uid;
            if (sscanf(line, "Uid: %u", &uid) == 1 && uid == getuid()) { printf("PROC %s\n", e->d_name); n++; }
        }
        fclose(f);
    }
    if (d) closedir(d);
    return n;
}
int main(void) {
    int found = extra_entries("/tmp", "candidate", NULL) + extra_entries("/dev/shm", NULL, NULL) +
                extra_entries("/tmp/candidate", "main.c", "build") + other_processes();
    if (found) return 0;
    long long n, x, s = 0;
    if (scanf("%lld", &n) != 1) return 0;
    for (long long i = 0; i < n; i++) { scanf("%lld", &x); s += x; }
    printf("%lld\n", s);
    return 0;
}
