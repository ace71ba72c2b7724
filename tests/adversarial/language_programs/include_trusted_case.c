// expect: compile_error
// technique: the compiler (as the candidate's user) includes the suite's expected output from /run/trusted
#include "/run/trusted/suite/cases/1.out"
int main(void) { return 0; }
