// expect: failed
// technique: a Java program reads the expected output from the suite (/run/trusted, through /proc/1/root and /proc/1/cwd) and prints it
import java.nio.file.Files;
import java.nio.file.Path;

public class ReadsExpected {
    public static void main(String[] args) {
        String[] paths = {"/run/trusted/suite/cases/1.out", "/proc/1/root/run/trusted/suite/cases/1.out",
                          "/proc/1/cwd/suite/cases/1.out"};
        for (String p : paths) {
            try {
                System.out.print(Files.readString(Path.of(p)));
                return;
            } catch (Exception e) {
                // refused: try the next way in
            }
        }
        System.out.println("nothing");
    }
}
