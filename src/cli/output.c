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

/* Standard output, or a stream standard output or standard error already
 * is. */
static int open_descriptor(attn_cli_output *out, int fd)
{
    out->fd = fd;
    out->owned = 0;
    return 0;
}

/* A device or a FIFO: opened as it is and written, never replaced. A FIFO
 * waits for a reader, as a shell's `>` does. */
static int open_special(attn_cli_output *out, const struct stat *target,
                        char *error, size_t error_cap)
{
    if (S_ISSOCK(target->st_mode))
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    "it is a socket, which is connected to, not opened");
    do out->fd = open(out->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    while (out->fd < 0 && errno == EINTR);
    if (out->fd < 0)
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    strerror(errno));
    out->owned = 1;
    return 0;
}

/* A new file beside `file` (which out->partial names), renamed over it
 * once complete and on disk (finish). `replaced` is the regular file
 * there, or NULL when there is none; file is taken (freed by finish). */
static int open_replacing(attn_cli_output *out, char *file,
                          const struct stat *replaced, char *error,
                          size_t error_cap)
{
    out->file = file;
    out->partial = malloc(strlen(file) + PARTIAL_TAIL + 1);
    if (out->partial == NULL)
        return fail(error, error_cap, EXIT_WRITE_FAILED, out->path,
                    "out of memory");
    /* Owner-only until the permissions are FILE's: the result is never
     * readable by more people than FILE is. */
    out->fd = create_beside(out->partial, file, replaced ? 0600 : 0666);
    if (out->fd < 0) {
        free(out->partial);
        out->partial = NULL;
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    strerror(errno));
    }
    out->owned = 1;
    if (replaced != NULL && keep_ownership(out->fd, replaced) != 0)
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    errno == EPERM
                        ? "it belongs to another user or group, which a "
                          "file written in its place would not keep"
                        : strerror(errno));
    return 0;
}

/* A regular file that out->path is or (through links) points at. */
static int open_regular(attn_cli_output *out, const struct stat *target,
                        char *error, size_t error_cap)
{
    struct stat own;
    char *file = lstat(out->path, &own) == 0 && !S_ISLNK(own.st_mode)
                     ? strdup(out->path)
                     : realpath(out->path, NULL);
    if (file == NULL)
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    strerror(errno));
    return open_replacing(out, file, target, error, error_cap);
}

/* Nothing at out->path, or a link to nothing. */
static int open_new(attn_cli_output *out, char *error, size_t error_cap)
{
    struct stat own;
    if (lstat(out->path, &own) == 0 && S_ISLNK(own.st_mode))
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    "it is a link to a file that does not exist (attn "
                    "writes through a link, never replaces it)");
    char *file = strdup(out->path);
    if (file == NULL)
        return fail(error, error_cap, EXIT_WRITE_FAILED, out->path,
                    "out of memory");
    return open_replacing(out, file, NULL, error, error_cap);
}

static int open_path(attn_cli_output *out, char *error, size_t error_cap)
{
    if (out->path == NULL) return open_descriptor(out, STDOUT_FILENO);
    struct stat target;
    if (stat(out->path, &target) != 0) {
        if (errno == ENOENT) return open_new(out, error, error_cap);
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    strerror(errno));
    }
    const int stream = standard_stream(&target);
    if (stream != 0) return open_descriptor(out, stream);
    if (S_ISDIR(target.st_mode))
        return fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                    "it is a folder");
    if (!S_ISREG(target.st_mode))
        return open_special(out, &target, error, error_cap);
    return open_regular(out, &target, error, error_cap);
}

int attn_cli_output_open(attn_cli_output *out, const char *path, char *error,
                         size_t error_cap)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    out->path = path == NULL || strcmp(path, "-") == 0 ? NULL : path;
    const int exit_status = open_path(out, error, error_cap);
    if (exit_status != 0) attn_cli_output_finish(out, 0, NULL, 0);
    return exit_status;
}

void attn_cli_output_write(attn_cli_output *out, const char *bytes,
                           size_t count)
{
    if (out->write_errno != 0 || count == 0) return;
    if (write_all(out->fd, bytes, count) != 0)
        out->write_errno = errno != 0 ? errno : EIO;
    else
        out->last = bytes[count - 1];
}

/* The write's failure, named by the path the user typed. */
static int write_failed(const attn_cli_output *out, int saved_errno,
                        char *error, size_t error_cap)
{
    return fail(error, error_cap, EXIT_WRITE_FAILED,
                out->path != NULL ? out->path : "the result",
                strerror(saved_errno));
}

int attn_cli_output_finish(attn_cli_output *out, int keep, char *error,
                           size_t error_cap)
{
    int exit_status = 0;
    if (keep) {
        if (out->last != '\n') attn_cli_output_write(out, "\n", 1);
        if (out->write_errno == 0 && out->partial != NULL && fsync(out->fd))
            out->write_errno = errno;
        if (out->write_errno != 0)
            exit_status = write_failed(out, out->write_errno, error, error_cap);
    }
    if (out->owned && close(out->fd) != 0 && exit_status == 0 && keep &&
        errno != EINTR)
        exit_status = write_failed(out, errno, error, error_cap);
    if (out->partial != NULL) {
        if (keep && exit_status == 0 && rename(out->partial, out->file) != 0)
            exit_status = fail(error, error_cap, EXIT_CANNOT_OPEN, out->path,
                               strerror(errno));
        if (!keep || exit_status != 0) unlink(out->partial);
    }
    free(out->partial);
    free(out->file);
    memset(out, 0, sizeof *out);
    out->fd = -1;
    return exit_status;
}

int attn_cli_write_output(const char *path, const char *output, size_t length,
                          char *error, size_t error_cap)
{
    attn_cli_output out;
    const int exit_status = attn_cli_output_open(&out, path, error, error_cap);
    if (exit_status != 0) return exit_status;
    attn_cli_output_write(&out, output, length);
    return attn_cli_output_finish(&out, 1, error, error_cap);
}
