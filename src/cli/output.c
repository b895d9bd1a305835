/* output.c: the result to standard output, or to -o FILE. What FILE is
 * decides how it is written:
 * - the file standard output or standard error already is (/dev/stdout,
 *   /proc/self/fd/1, a link to either): through that descriptor, so a pipe,
 *   a socket or a `>>` gets the result as the shell set it up;
 * - a regular file, or nothing yet: a new file beside it, renamed over it
 *   once complete, so a failure leaves FILE as it was and no partial file;
 *   a file replaced keeps its mode, owner and group, or is refused when its
 *   owner cannot be kept;
 * - anything else (a character device such as /dev/null, a FIFO): opened
 *   and written directly, never replaced;
 * - a link: what it points at, by the rules above; the link stays. */
/* POSIX 2008 with XSI: open, fchmod, fchown, fsync, lstat, realpath. */
#define _XOPEN_SOURCE 700

#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

enum {
    EXIT_CANNOT_OPEN = 2,  /* FILE cannot be written at all */
    EXIT_WRITE_FAILED = 1, /* the write failed part way */
    PARTIAL_TAIL = sizeof ".partial-" - 1 + 8, /* the temporary name's end */
    NAME_ATTEMPTS = 100 /* temporary names tried while they are taken */
};

static int fail(char *error, size_t error_cap, int exit_status,
                const char *path, const char *why)
{
    snprintf(error, error_cap, "cannot write %s: %s", path, why);
    return exit_status;
}

/* All of buffer to fd, through short writes and signals; 0 or -1. */
static int write_all(int fd, const char *buffer, size_t length)
{
    while (length > 0) {
        const ssize_t written = write(fd, buffer, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return -1;
        buffer += written;
        length -= (size_t)written;
    }
    return 0;
}

/* The result and a final newline if it lacks one; 0 or -1. */
static int put_result(int fd, const char *output, size_t length)
{
    if (write_all(fd, output, length) != 0) return -1;
    if (length == 0 || output[length - 1] != '\n')
        return write_all(fd, "\n", 1);
    return 0;
}

/* 1 or 2 when `target` is the file standard output or standard error
 * already is, else 0. */
static int standard_stream(const struct stat *target)
{
    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
        struct stat stream;
        if (fstat(fd, &stream) == 0 && stream.st_dev == target->st_dev &&
            stream.st_ino == target->st_ino)
            return fd;
    }
    return 0;
}

static int write_descriptor(int fd, const char *path, const char *output,
                            size_t length, char *error, size_t error_cap)
{
    if (put_result(fd, output, length) == 0) return 0;
    if (path == NULL)
        return fail(error, error_cap, EXIT_WRITE_FAILED, "the result",
                    strerror(errno));
    return fail(error, error_cap, EXIT_WRITE_FAILED, path, strerror(errno));
}

/* A device or a FIFO: opened as it is and written, never replaced. A FIFO
 * waits for a reader, as a shell's `>` does. */
static int write_special(const char *path, const struct stat *target,
                         const char *output, size_t length, char *error,
                         size_t error_cap)
{
    if (S_ISSOCK(target->st_mode))
        return fail(error, error_cap, EXIT_CANNOT_OPEN, path,
                    "it is a socket, which is connected to, not opened");
    int fd;
    do fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return fail(error, error_cap, EXIT_CANNOT_OPEN, path, strerror(errno));
    int failed = put_result(fd, output, length) != 0;
    const int saved_errno = errno;
    if (close(fd) != 0 && !failed && errno != EINTR) failed = 1;
    if (!failed) return 0;
    return fail(error, error_cap, EXIT_WRITE_FAILED, path,
                strerror(saved_errno));
}

/* A number for a temporary file's name: from the system's random source
 * when it opens, else from the time and the process id. Names need not be
 * secret (create_beside never opens one that exists), only unlikely to be
 * taken. */
static uint64_t name_seed(void)
{
    uint64_t seed = 0;
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed) seed = 0;
        close(fd);
    }
    if (seed == 0)
        seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15u ^ (uint64_t)getpid();
    return seed;
}

/* The temporary name beside `path`, written into name (strlen(path) +
 * PARTIAL_TAIL + 1 bytes) up to its random letters: path's folder, then
 * path's own name cut so that with ".partial-" and 8 letters it is at most
 * NAME_MAX bytes, then ".partial-". Returns where the letters go. */
static char *partial_prefix(char *name, const char *path)
{
    const char *slash = strrchr(path, '/');
    const size_t folder = slash == NULL ? 0 : (size_t)(slash - path) + 1;
    size_t own = strlen(path) - folder;
    if (own > NAME_MAX - PARTIAL_TAIL) own = NAME_MAX - PARTIAL_TAIL;
    memcpy(name, path, folder + own);
    memcpy(name + folder + own, ".partial-", sizeof ".partial-" - 1);
    return name + folder + own + sizeof ".partial-" - 1;
}

/* Creates and opens for writing a new file of the temporary name beside
 * `path`, in name: exclusively (O_EXCL: a file or link already there, even
 * a dangling one, makes the attempt fail instead of being opened or
 * followed), trying other letters while a name is taken. A descriptor, or
 * -1 with errno set. */
static int create_beside(char *name, const char *path, mode_t mode)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    char *suffix = partial_prefix(name, path);
    uint64_t state = name_seed();
    for (int attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        /* splitmix64: a new, well-mixed number from each step of state. */
        uint64_t bits = (state += 0x9E3779B97F4A7C15u);
        bits = (bits ^ (bits >> 30)) * 0xBF58476D1CE4E5B9u;
        bits = (bits ^ (bits >> 27)) * 0x94D049BB133111EBu;
        bits ^= bits >> 31;
        for (int i = 0; i < 8; i++, bits /= 36) suffix[i] = letters[bits % 36];
        suffix[8] = '\0';
        const int fd = open(
            name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1; /* errno is EEXIST */
}

/* The new file takes the owner, group and mode of the one it replaces
 * (owner before mode: a change of owner clears set-user-ID bits). 0, or -1
 * with errno set. */
static int keep_ownership(int fd, const struct stat *replaced)
{
    struct stat created;
    if (fstat(fd, &created) != 0) return -1;
    if ((created.st_uid != replaced->st_uid ||
         created.st_gid != replaced->st_gid) &&
        fchown(fd, replaced->st_uid, replaced->st_gid) != 0)
        return -1;
    return fchmod(fd, replaced->st_mode & 07777);
}

/* The result in a new file beside `file`, renamed over it once complete
 * and on disk. `replaced` is the regular file there, or NULL when there is
 * none; `path` is the name to report (what the user typed). */
static int write_replacing(const char *file, const struct stat *replaced,
                           const char *path, const char *output, size_t length,
                           char *error, size_t error_cap)
{
    char *partial = malloc(strlen(file) + PARTIAL_TAIL + 1);
    if (partial == NULL)
        return fail(error, error_cap, EXIT_WRITE_FAILED, path, "out of memory");
    /* Owner-only until the permissions are FILE's: the result is never
     * readable by more people than FILE is. */
    const int fd = create_beside(partial, file, replaced ? 0600 : 0666);
    if (fd < 0) {
        free(partial);
        return fail(error, error_cap, EXIT_CANNOT_OPEN, path, strerror(errno));
    }
    int exit_status = 0;
    if (replaced != NULL && keep_ownership(fd, replaced) != 0) {
        exit_status = fail(error, error_cap, EXIT_CANNOT_OPEN, path,
                           errno == EPERM
                               ? "it belongs to another user or group, which "
                                 "a file written in its place would not keep"
                               : strerror(errno));
    } else if (put_result(fd, output, length) != 0 || fsync(fd) != 0) {
        exit_status = fail(error, error_cap, EXIT_WRITE_FAILED, path,
                           strerror(errno));
    }
    if (close(fd) != 0 && exit_status == 0 && errno != EINTR)
        exit_status = fail(error, error_cap, EXIT_WRITE_FAILED, path,
                           strerror(errno));
    if (exit_status == 0 && rename(partial, file) != 0)
        exit_status = fail(error, error_cap, EXIT_CANNOT_OPEN, path,
                           strerror(errno));
    if (exit_status != 0) unlink(partial);
    free(partial);
    return exit_status;
}

/* A regular file that `path` is or (through links) points at. */
static int write_regular(const char *path, const struct stat *target,
                         const char *output, size_t length, char *error,
                         size_t error_cap)
{
    struct stat own;
    if (lstat(path, &own) == 0 && !S_ISLNK(own.st_mode))
        return write_replacing(path, target, path, output, length, error,
                               error_cap);
    char *file = realpath(path, NULL);
    if (file == NULL)
        return fail(error, error_cap, EXIT_CANNOT_OPEN, path, strerror(errno));
    const int exit_status = write_replacing(file, target, path, output, length,
                                            error, error_cap);
    free(file);
    return exit_status;
}

/* Nothing at `path`, or a link to nothing. */
static int write_new(const char *path, const char *output, size_t length,
                     char *error, size_t error_cap)
{
    struct stat own;
    if (lstat(path, &own) == 0 && S_ISLNK(own.st_mode))
        return fail(error, error_cap, EXIT_CANNOT_OPEN, path,
                    "it is a link to a file that does not exist (attn "
                    "writes through a link, never replaces it)");
    return write_replacing(path, NULL, path, output, length, error, error_cap);
}

int attn_cli_write_output(const char *path, const char *output, size_t length,
                          char *error, size_t error_cap)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return write_descriptor(STDOUT_FILENO, NULL, output, length, error,
                                error_cap);
    struct stat target;
    if (stat(path, &target) != 0) {
        if (errno == ENOENT)
            return write_new(path, output, length, error, error_cap);
        return fail(error, error_cap, EXIT_CANNOT_OPEN, path, strerror(errno));
    }
    const int stream = standard_stream(&target);
    if (stream != 0)
        return write_descriptor(stream, path, output, length, error, error_cap);
    if (S_ISDIR(target.st_mode))
        return fail(error, error_cap, EXIT_CANNOT_OPEN, path, "it is a folder");
    if (!S_ISREG(target.st_mode))
        return write_special(path, &target, output, length, error, error_cap);
    return write_regular(path, &target, output, length, error, error_cap);
}
