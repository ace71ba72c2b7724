// expect: compile_error
// technique: a compile-time bomb: unbounded template recursion (the compiler's depth limit, or the compile limits)
template <int N> struct Bomb { static const int value = Bomb<N + 1>::value + Bomb<N + 2>::value; };
int main() { return Bomb<0>::value; }
