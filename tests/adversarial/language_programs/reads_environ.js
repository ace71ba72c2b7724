// expect: failed
// technique: a Node program reads the trusted side's environment and files (/proc/1/environ, /run/trusted, /proc/1/root) and prints what it finds
const fs = require("fs");
for (const p of ["/run/trusted/suite/cases/1.out", "/proc/1/root/run/trusted/suite/cases/1.out", "/proc/1/environ"]) {
  try {
    process.stdout.write(fs.readFileSync(p, "utf8"));
    process.exit(0);
  } catch (e) {
    // refused: try the next way in
  }
}
console.log("nothing");
