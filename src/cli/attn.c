/* attn.c: the command line. Reads one problem as JSON (a file or standard
 * input), runs it and prints the result as JSON, a text walkthrough,
 * Markdown or LaTeX. Every failure is one line on standard error. */
#include "attention.h"
#include "problem_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTN_CLI_VERSION "0.1.0"
#define USAGE "usage: attn [--format json|text|markdown|latex] [FILE]"

enum {
    EXIT_BAD_INPUT = 2, /* a bad option, an unreadable file or bad input */
    EXIT_INTERNAL = 1,  /* out of memory, or the result could not be written */
    ERROR_CAP = 1024,
    READ_CHUNK = 64 * 1024,
    NEAR_BEFORE = 12, /* bytes quoted around a JSON error: cJSON's */
    NEAR_AFTER = 8    /* position is often a byte or two late */
};

static const char help_text[] =
    USAGE "\n"
    "\n"
    "Reads one attention problem as JSON from FILE (standard input when FILE\n"
    "is missing or \"-\"), computes it exactly and prints the result.\n"
    "\n"
    "  -f, --format FORMAT  json (default): the result object, as the JS API\n"
    "                       returns it; masked entries of scaled are null\n"
    "                       text: a step-by-step walkthrough\n"
    "                       markdown: the walkthrough as Markdown tables\n"
    "                       latex: the walkthrough as a LaTeX fragment\n"
    "                       (amsmath), to paste into a .tex file\n"
    "  -h, --help           show this help\n"
    "      --version        show the version\n"
    "\n"
    "A problem is {\"kind\": ..., fields...}. Kinds: scaledDotProduct,\n"
    "multiHead, additive, luong, linear, softmax, weightedSum,\n"
    "transformerBlock; their fields are listed in src/attention.h. With\n"
    "gradOutput (gradContext for additive and luong) the result also holds\n"
    "the gradients. For example:\n"
    "  echo '{\"kind\": \"softmax\", \"x\": [1, 2, 3]}' | attn --format text\n"
    "\n"
    "Exit status: 0 on success; 2 for a bad option, an unreadable file or a\n"
    "bad problem (one line on standard error); 1 when memory runs out or the\n"
    "result cannot be written.\n";

typedef struct cli_args {
    int format;       /* an attn_format */
    const char *path; /* NULL = standard input */
    int help, version;
} cli_args;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail(char *error, size_t error_cap, int exit_status,
                const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_cap, format, args);
    va_end(args);
    return exit_status;
}

/* ---- Options ---- */

static int parse_format(const char *name, int *format, char *error,
                        size_t error_cap)
{
    static const struct { const char *name; int format; } formats[] = {
        {"json", ATTN_FORMAT_JSON},
        {"text", ATTN_FORMAT_TEXT},
        {"markdown", ATTN_FORMAT_MARKDOWN},
        {"latex", ATTN_FORMAT_LATEX},
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (strcmp(name, formats[i].name) == 0) {
            *format = formats[i].format;
            return 0;
        }
    }
    return fail(error, error_cap, EXIT_BAD_INPUT,
                "unknown format \"%s\" (expected json, text, markdown or "
                "latex)", name);
}

/* Sets *value to the value of --format / -f (as "--format X",
 * "--format=X", "-f X" or "-fX") and returns how many arguments it took;
 * 0 if argv[i] is not the format option, -1 if its value is missing. */
static int format_option(char **argv, int argc, int i, const char **value)
{
    const char *arg = argv[i];
    if (strncmp(arg, "--format=", 9) == 0) {
        *value = arg + 9;
        return 1;
    }
    if (strncmp(arg, "-f", 2) == 0 && arg[2] != '\0') {
        *value = arg + 2;
        return 1;
    }
    if (strcmp(arg, "--format") != 0 && strcmp(arg, "-f") != 0) return 0;
    if (i + 1 >= argc) return -1;
    *value = argv[i + 1];
    return 2;
}

static int parse_args(cli_args *args, int argc, char **argv, char *error,
                      size_t error_cap)
{
    memset(args, 0, sizeof *args);
    args->format = ATTN_FORMAT_JSON;
    int only_files = 0; /* after "--" */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value;
        const int taken = only_files ? 0 : format_option(argv, argc, i, &value);
        if (taken < 0)
            return fail(error, error_cap, EXIT_BAD_INPUT,
                        "%s needs a value (json, text, markdown or latex); "
                        USAGE, arg);
        if (taken > 0) {
            if (parse_format(value, &args->format, error, error_cap) != 0)
                return EXIT_BAD_INPUT;
            i += taken - 1;
        } else if (!only_files && strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (!only_files &&
                   (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
            args->help = 1;
        } else if (!only_files && strcmp(arg, "--version") == 0) {
            args->version = 1;
        } else if (!only_files && arg[0] == '-' && arg[1] != '\0') {
            return fail(error, error_cap, EXIT_BAD_INPUT,
                        "unknown option \"%s\"; " USAGE, arg);
        } else if (args->path != NULL) {
            return fail(error, error_cap, EXIT_BAD_INPUT,
                        "expected one FILE, got \"%s\" and \"%s\"; " USAGE,
                        args->path, arg);
        } else {
            args->path = arg;
        }
    }
    if (args->path != NULL && strcmp(args->path, "-") == 0 && !only_files)
        args->path = NULL;
    return 0;
}

/* ---- Input ---- */

/* The whole stream in a new NUL-terminated buffer, its length without the
 * NUL in *length; NULL on a read error or when memory runs out. */
static char *read_stream(FILE *in, size_t *length)
{
    size_t cap = READ_CHUNK, used = 0;
    char *text = malloc(cap);
    while (text != NULL) {
        used += fread(text + used, 1, cap - used - 1, in);
        if (ferror(in)) break;
        if (feof(in)) {
            text[used] = '\0';
            *length = used;
            return text;
        }
        char *grown = cap <= SIZE_MAX / 2 ? realloc(text, cap * 2) : NULL;
        if (grown == NULL) break;
        text = grown;
        cap *= 2;
    }
    free(text);
    return NULL;
}

static int read_input(const char *path, char **text, size_t *length,
                      char *error, size_t error_cap)
{
    FILE *in = path != NULL ? fopen(path, "rb") : stdin;
    if (in == NULL)
        return fail(error, error_cap, EXIT_BAD_INPUT, "cannot open %s: %s",
                    path, strerror(errno));
    errno = 0;
    *text = read_stream(in, length);
    const int read_errno = errno;
    if (path != NULL) fclose(in);
    if (*text == NULL)
        return fail(error, error_cap, read_errno == ENOMEM ? EXIT_INTERNAL
                                                           : EXIT_BAD_INPUT,
                    "cannot read %s: %s",
                    path != NULL ? path : "standard input",
                    read_errno != 0 ? strerror(read_errno) : "read error");
    return 0;
}

/* Line and column (from 1, in bytes) of position `at` in text. */
static void line_and_column(const char *text, const char *at, int *line,
                            int *column)
{
    *line = 1;
    *column = 1;
    for (const char *c = text; c < at; c++) {
        if (*c == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

static int parse_json(cJSON **root, const char *text, size_t length,
                      char *error, size_t error_cap)
{
    if (text[strspn(text, " \t\r\n")] == '\0' && strlen(text) == length)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "empty input; expected a JSON problem object such as "
                    "{\"kind\": \"softmax\", \"x\": [1, 2, 3]}");
    int line, column;
    const char *nul = memchr(text, '\0', length);
    if (nul != NULL) {
        line_and_column(text, nul, &line, &column);
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "invalid JSON at line %d, column %d: a NUL byte", line,
                    column);
    }
    const char *end = NULL;
    /* length + 1: cJSON wants the terminating NUL inside the buffer when it
     * checks for trailing text. */
    *root = cJSON_ParseWithLengthOpts(text, length + 1, &end, 1);
    if (*root != NULL) return 0;
    const char *content_end = text + length; /* after the last non-space */
    while (content_end > text && strchr(" \t\r\n", content_end[-1]) != NULL)
        content_end--;
    const int at_end = end == NULL || end < text || end >= content_end;
    if (at_end) end = content_end;
    line_and_column(text, end, &line, &column);
    const char *from = end - (column - 1 < NEAR_BEFORE ? column - 1
                                                        : NEAR_BEFORE);
    while (from < end && ((unsigned char)*from & 0xC0) == 0x80) from++;
    if (at_end)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "invalid JSON at the end of the input (line %d, column "
                    "%d), after \"%.*s\"", line, column, (int)(end - from),
                    from);
    size_t after = strcspn(end, "\r\n");
    if (after > NEAR_AFTER) after = NEAR_AFTER;
    while (after > 0 && ((unsigned char)end[after] & 0xC0) == 0x80) after--;
    return fail(error, error_cap, EXIT_BAD_INPUT,
                "invalid JSON at line %d, column %d, near \"%.*s\"", line,
                column, (int)(end + after - from), from);
}

/* ---- Running and output ---- */

static int exit_status_for(int status)
{
    return status == ATTN_ERR_NOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT;
}

/* The formatted result into a new buffer (*output, *length). */
static int run_problem(const cJSON *root, int format, char **output,
                       size_t *length, char *error, size_t error_cap)
{
    attn_problem *problem;
    int status = attn_problem_from_json(&problem, root, NULL, error,
                                        error_cap);
    if (status != ATTN_OK) return exit_status_for(status);
    status = attn_problem_run(problem);
    if (status == ATTN_OK)
        status = attn_problem_format(problem, format, NULL, 0, length);
    *output = status == ATTN_OK ? malloc(*length + 1) : NULL;
    if (status == ATTN_OK && *output == NULL) status = ATTN_ERR_NOMEM;
    if (status == ATTN_OK)
        status = attn_problem_format(problem, format, *output, *length + 1,
                                     length);
    if (status != ATTN_OK) {
        snprintf(error, error_cap, "%s",
                 *attn_problem_error(problem) != '\0'
                     ? attn_problem_error(problem) : attn_status_text(status));
        free(*output);
        *output = NULL;
    }
    attn_problem_destroy(problem);
    return status == ATTN_OK ? 0 : exit_status_for(status);
}

static int write_output(const char *output, size_t length, char *error,
                        size_t error_cap)
{
    fwrite(output, 1, length, stdout);
    if (length == 0 || output[length - 1] != '\n') putchar('\n');
    if (fflush(stdout) != 0 || ferror(stdout))
        return fail(error, error_cap, EXIT_INTERNAL,
                    "cannot write the result: %s", strerror(errno));
    return 0;
}

/* Input to output; 0, or an exit status with the message in error. */
static int run_cli(const cli_args *args, char *error, size_t error_cap)
{
    char *text;
    size_t length;
    int exit_status = read_input(args->path, &text, &length, error,
                                 error_cap);
    if (exit_status != 0) return exit_status;
    cJSON *root = NULL;
    exit_status = parse_json(&root, text, length, error, error_cap);
    free(text);
    if (exit_status != 0) return exit_status;
    char *output;
    exit_status = run_problem(root, args->format, &output, &length, error,
                              error_cap);
    cJSON_Delete(root);
    if (exit_status != 0) return exit_status;
    exit_status = write_output(output, length, error, error_cap);
    free(output);
    return exit_status;
}

int main(int argc, char **argv)
{
    char error[ERROR_CAP];
    cli_args args;
    int exit_status = parse_args(&args, argc, argv, error, sizeof error);
    if (exit_status == 0 && args.help) {
        fputs(help_text, stdout);
    } else if (exit_status == 0 && args.version) {
        puts("attn " ATTN_CLI_VERSION);
    } else if (exit_status == 0) {
        exit_status = run_cli(&args, error, sizeof error);
    }
    if (exit_status != 0) fprintf(stderr, "attn: %s\n", error);
    return exit_status;
}
