/* Names the test behind every AddressSanitizer report of tools/sanitize.sh's run.
 *
 * sanitize.sh compiles this into its work directory and preloads it into the test process and
 * every child (subprocess, fork child, multiprocessing spawn child: they inherit LD_PRELOAD
 * and ASAN_OPTIONS). ASan calls __asan_on_error() before it prints a report (memory errors
 * and deadly signals such as SEGV alike); this writes one line into that report:
 *
 *   cypool-asan: test=<PYTEST_CURRENT_TEST or none> pid=<pid> ppid=<ppid> tid=<tid> cmd=<cmdline>
 *
 * pytest sets PYTEST_CURRENT_TEST during each test and children inherit it. The line goes
 * through __sanitizer_report_error_summary, whose default prints to the report's own
 * destination (log_path.<pid>), so it sits at the head of the report: a process that dies
 * while the report is being written (another thread calling _exit, a SIGKILL at a
 * deadline) still leaves its test named. A death callback covers ASan's CHECK failures,
 * which end the process without calling __asan_on_error.
 *
 * libasan defines __asan_on_error weakly, and the dynamic linker takes the first definition
 * in load order, so this library must be loaded before libasan (LD_PRELOAD=this:libasan);
 * it names libasan as a dependency (libasan is still initialised first) and sanitize.sh sets
 * verify_asan_link_order=0. Not instrumented; only async-signal-safe calls besides getenv. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void __sanitizer_report_error_summary(const char *summary);
void __sanitizer_set_death_callback(void (*callback)(void));

static volatile int marked;

static char *put(char *p, char *end, const char *s) {
  while (*s && p < end) *p++ = *s++;
  return p;
}

static char *put_int(char *p, char *end, long v) {
  char tmp[24];
  int n = 0;
  if (v < 0) {
    p = put(p, end, "-");
    v = -v;
  }
  do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) && n < (int)sizeof tmp);
  while (n && p < end) *p++ = tmp[--n];
  return p;
}

static void mark(const char *what) {
  char line[1024];
  char *p = line, *end = line + sizeof line - 1;
  const char *test = getenv("PYTEST_CURRENT_TEST");
  p = put(p, end, "cypool-asan: ");
  p = put(p, end, what);
  p = put(p, end, "test=");
  p = put(p, end, test && *test ? test : "none");
  p = put(p, end, " pid=");
  p = put_int(p, end, (long)getpid());
  p = put(p, end, " ppid=");
  p = put_int(p, end, (long)getppid());
  p = put(p, end, " tid=");
  p = put_int(p, end, (long)syscall(SYS_gettid));
  p = put(p, end, " cmd=");
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char cmd[200];
    ssize_t n = read(fd, cmd, sizeof cmd - 1);
    close(fd);
    for (ssize_t i = 0; i < n; i++)  /* argv is NUL-separated; keep the marker one line */
      if (cmd[i] == '\0' || cmd[i] == '\n' || cmd[i] == '\r') cmd[i] = ' ';
    while (n > 0 && cmd[n - 1] == ' ') n--;
    cmd[n > 0 ? n : 0] = '\0';
    p = put(p, end, cmd);
  }
  *p = '\0';
  __sanitizer_report_error_summary(line);
}

void __asan_on_error(void) {
  marked = 1;
  mark("");
}

static void on_death(void) {
  if (!marked) mark("died ");
}

__attribute__((constructor)) static void install(void) {
  __sanitizer_set_death_callback(on_death);
}
