/*
 * An LD_PRELOAD shim that makes fsync(2) and fdatasync(2) slow, for chaos tests of a node whose disk
 * syncs slowly. Each call sleeps a delay and then does the real sync. The delay, in milliseconds, is
 * read at every call from the file SLOW_FSYNC_CONTROL (missing, empty or 0: no delay), so that a test
 * can slow a running node's disk and speed it up again; without that variable it is SLOW_FSYNC_MS
 * (default 0). With SLOW_FSYNC_PATH set, only files whose path starts with it are delayed, so that
 * the JVM's own files and the logs stay fast.
 *
 * Build: gcc -shared -fPIC -O2 -o libslowfsync.so slow_fsync.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long delay_ms(void) {
    const char *control = getenv("SLOW_FSYNC_CONTROL");
    if (control != NULL) {
        FILE *f = fopen(control, "r");
        long ms = 0;
        if (f != NULL) {
            if (fscanf(f, "%ld", &ms) != 1) {
                ms = 0;
            }
            fclose(f);
        }
        return ms;
    }
    const char *v = getenv("SLOW_FSYNC_MS");
    return v == NULL ? 0 : atol(v);
}

static int delayed_file(int fd) {
    const char *prefix = getenv("SLOW_FSYNC_PATH");
    if (prefix == NULL || *prefix == '\0') {
        return 1;
    }
    char link[64];
    char path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 0) {
        return 0;
    }
    path[n] = '\0';
    return strncmp(path, prefix, strlen(prefix)) == 0;
}

static void slow_down(int fd) {
    long ms = delay_ms();
    if (ms <= 0 || !delayed_file(fd)) {
        return;
    }
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
        /* interrupted by a signal: sleep the rest */
    }
}

int fsync(int fd) {
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int)) dlsym(RTLD_NEXT, "fsync");
    }
    slow_down(fd);
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (real == NULL) {
        real = (int (*)(int)) dlsym(RTLD_NEXT, "fdatasync");
    }
    slow_down(fd);
    return real(fd);
}
