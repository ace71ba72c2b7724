// expect: passed
// technique: a Go program answers right but starts a process in its own session (Setsid) that outlives it and keeps a marker alive for the next case to find
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	cmd := exec.Command("sh", "-c", "while :; do : > /tmp/daemon-marker; : > /dev/shm/daemon-marker; sleep 0.01; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	_ = cmd.Start()
	in := bufio.NewReader(os.Stdin)
	var n, x, s int64
	fmt.Fscan(in, &n)
	for i := int64(0); i < n; i++ {
		fmt.Fscan(in, &x)
		s += x
	}
	fmt.Println(s)
}
