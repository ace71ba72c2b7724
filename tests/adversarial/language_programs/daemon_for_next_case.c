// expect: passed
// technique: leaves a daemon (setsid, double fork, stdio closed) that keeps a marker alive for the next case to find
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    if (access("/dev/shm/daemon-marker", F_OK) == 0 || access("/tmp/daemon-marker", F_OK) == 0) {
        puts("LEFTOVER");  /* a wrong answer: something of an earlier case survived */
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (fork() == 0) {
            close(0); close(1); close(2);
            for (;;) {
                int fd = open("/dev/shm/daemon-marker", O_CREAT | O_WRONLY, 0600);
                if (fd >= 0) close(fd);
                fd = open("/tmp/daemon-marker", O_CREAT | O_WRONLY, 0600);
                if (fd >= 0) close(fd);
                usleep(1000);
            }
        }
        _exit(0);
    }
    long long n, x, s = 0;
    if (scanf("%lld", &n) != 1) return 0;
    for (long long i = 0; i < n; i++) { scanf("%lld", &x); s += x; }
    printf("%lld\n", s);
    return 0;
}
