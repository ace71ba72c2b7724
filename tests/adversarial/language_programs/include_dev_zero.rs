// expect: compile_error
// technique: a compile-time bomb: include_bytes! of /dev/zero (rustc reads without end: the compile memory or time limit)
static ZERO: &[u8] = include_bytes!("/dev/zero");
fn main() { println!("{}", ZERO.len()); }
