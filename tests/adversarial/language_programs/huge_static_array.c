// expect: compile_error
// technique: a compile-time bomb: a 1 GiB initialised array the program reads (object file over the file size and scratch limits)
#include <stdio.h>
static char big[1u << 30] = {1};
int main(void) { return big[getchar() & 0xfffff]; }
