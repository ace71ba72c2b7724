// expect: error timeout oom
// technique: a Java program starts threads until the pids limit stops it, each parked forever, then prints a wrong answer (the reset must end every thread)
public class ThreadBomb {
    public static void main(String[] args) {
        int made = 0;
        try {
            while (true) {
                Thread t = new Thread(() -> {
                    try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException e) { }
                });
                t.setDaemon(false);
                t.start();
                made++;
            }
        } catch (Throwable e) {
            System.out.println("made " + made);
        }
    }
}
