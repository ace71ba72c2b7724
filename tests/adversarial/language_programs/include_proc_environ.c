// expect: compile_error
// technique: the compiler includes PID 1's environment (the trusted side's) through /proc
#include "/proc/1/environ"
int main(void) { return 0; }
