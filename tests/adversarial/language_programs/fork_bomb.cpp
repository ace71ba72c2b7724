// expect: timeout error
// technique: a fork bomb from a compiled program (the pids limit; the reset empties the process table)
#include <unistd.h>
int main() { for (;;) fork(); }
