// expect: passed
// technique: a Node program answers right but spawns a detached child (its own session, stdio ignored, unref'd) that keeps a marker alive for the next case to find
const fs = require("fs");
const { spawn } = require("child_process");
spawn("sh", ["-c", "while :; do : > /tmp/daemon-marker; : > /dev/shm/daemon-marker; sleep 0.01; done"], {
  detached: true,
  stdio: "ignore",
}).unref();
const text = fs.readFileSync(0, "latin1");
const number = /-?\d+/g;
const n = Number(number.exec(text)[0]);
let s = 0;
for (let i = 0; i < n; i++) s += Number(number.exec(text)[0]);
console.log(String(s));
