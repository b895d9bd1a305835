/* attn.c: the command line. Reads one problem as JSON (a file or standard
 * input), runs it and prints the result as JSON, a text walkthrough,
 * Markdown or LaTeX. Every failure is one line on standard error. */
#include "attention.h"
#include "answer_cli.h"
#include "problem_json.h"
#include "bytes.h"
#include "model_cli.h"
#include "train_cli.h"
#include "output.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTN_CLI_VERSION "0.1.0"
#define USAGE                                                          \
    "usage: attn [--format json|text|markdown|latex|steps] [-o FILE] " \
    "[--max-bytes N] [--title TEXT] [--heading-level N] [FILE]"

enum {
    EXIT_BAD_INPUT = 2, /* a bad option, an unreadable file or bad input */
    EXIT_INTERNAL = 1,  /* out of memory, or the result could not be written */
    ERROR_CAP = 1024,
    READ_CHUNK = 64 * 1024
};

static const char help_text[] = USAGE
    "\n"
    "       attn check [--format json|text|markdown|latex] [-o FILE] [FILE]\n"
    "       attn answer CELL VALUE [--format text|json] [-o FILE] [FILE]\n"
    "       attn train --task NAME [options]   (attn train --help)\n"
    "       attn model run|generate --model DIR [options]   (attn model "
    "--help)\n"
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
    "                       steps: the walkthrough as data (JSON steps with\n"
    "                       their equations), what the page renders\n"
    "      --outline        with --format steps: the steps without their\n"
    "                       equations (a step with some says how many,\n"
    "                       \"equationCount\"), as the page asks first\n"
    "      --step N         with --format steps: only step N's equations\n"
    "                       (from 1), as the page asks for the step it shows\n"
    "  -o, --output FILE    write the result to FILE instead of standard\n"
    "                       output; only on success, so a failed run\n"
    "                       leaves no FILE (nor an empty one) behind\n"
    "      --max-bytes N    the most bytes the problem may hold in its\n"
    "                       tensors and results (default 268435456, 256 MiB),\n"
    "                       and the most reading and parsing its JSON may\n"
    "                       take: about 80 bytes a number, and the input\n"
    "                       may be at most N bytes\n"
    "      --title TEXT     the walkthrough's title instead of its own\n"
    "                       (\"Scaled dot-product attention\"), at most 200\n"
    "                       bytes\n"
    "      --heading-level N  the level of that title, 1 (default) to 4;\n"
    "                       the step headings follow one level under it\n"
    "  -h, --help           show this help\n"
    "      --version        show the version\n"
    "\n"
    "A problem is {\"kind\": ..., fields...}. Kinds: scaledDotProduct,\n"
    "multiHead, additive, luong, linear, softmax, weightedSum,\n"
    "transformerBlock, onlineSoftmax; their fields are listed in\n"
    "src/attention.h. With\n"
    "gradOutput (gradContext for additive and luong; or target for\n"
    "scaledDotProduct, the loss ½‖output − target‖²) the result also holds\n"
    "the gradients. For example:\n"
    "  echo '{\"kind\": \"softmax\", \"x\": [1, 2, 3]}' | attn --format text\n"
    "\n"
    "attn check reads the same problem with a \"printed\" object beside its\n"
    "fields: the numbers someone printed for its results, by result name\n"
    "(\"weights\", \"output_row2\", \"heads\": [{\"scores\": ...}]; null for\n"
    "a masked -inf), and optionally \"printedDecimals\" (a number, or one\n"
    "per key). It reports every printed number the exact value does not\n"
    "round to, grouped by cause (a misprint and what it was carried into,\n"
    "rounding, or a slip such as no-scale or softmax-columns), each with a\n"
    "sentence; exit status 0 when every printed number holds, 1 when some\n"
    "do not. Where no printed key names a result it fails (exit status 2),\n"
    "unless --allow-none: then its report says none was checked and lists\n"
    "the keys under \"unchecked\", as the JS API's check() does.\n"
    "\n"
    "attn answer grades one learner's VALUE for CELL (result:row:column,\n"
    "from 0, as weights:0:1) of the problem, by the check's rule at the\n"
    "decimals typed (at least 2): it prints the verdict and a hint, the\n"
    "JS API's answer() and Python's answer() word for word (--format json:\n"
    "their whole object); exit status 0 when right, 1 when not.\n"
    "\n"
    "Exit status: 0 on success; 2 for a bad option, an unreadable file or a\n"
    "bad or too large problem (one line on standard error); 1 when memory\n"
    "runs out or the result cannot be written.\n";

typedef struct cli_args {
    int format;         /* an attn_format */
    const char *path;   /* NULL = standard input */
    const char *output; /* NULL = standard output */
    size_t max_bytes;   /* the problem's limit */
    const char *title;  /* NULL = the walkthrough's own */
    int heading_level;  /* 0 = the default, 1 */
    int help, version;
    int check;        /* attn check: the printed numbers checked */
    int outline;      /* --outline: the steps without their equations */
    int step;         /* --step N: step N's equations; 0 = every step's */
    int allow_none;   /* attn check --allow-none: a report of nothing checked */
    int format_given; /* --format was given (attn answer prints text unless) */
    const char *cell, *typed; /* attn answer's CELL and VALUE; NULL otherwise */
} cli_args;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
fail(char *error, size_t error_cap, int exit_status, const char *format, ...)
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
    char expected[64] = ""; /* "json, text, markdown, latex or steps" */
    for (int i = 0; attn_format_name(i) != NULL; i++) {
        if (strcmp(name, attn_format_name(i)) == 0) {
            *format = i;
            return 0;
        }
        const char *separator = i == 0                            ? ""
                                : attn_format_name(i + 1) != NULL ? ", "
                                                                  : " or ";
        const size_t used = strlen(expected);
        snprintf(expected + used, sizeof expected - used, "%s%s", separator,
                 attn_format_name(i));
    }
    return fail(error, error_cap, EXIT_BAD_INPUT,
                "unknown format \"%s\" (expected %s)", name, expected);
}

/* Sets *value to the value of option long_name / short_name (as "--long
 * X", "--long=X", "-s X" or "-sX"; short_name NULL for none) and returns how
 * many arguments it took; 0 if argv[i] is not that option, -1 if its value
 * is missing. */
static int value_option(char **argv, int argc, int i, const char *long_name,
                        const char *short_name, const char **value)
{
    const char *arg = argv[i];
    const size_t long_length = strlen(long_name);
    if (strncmp(arg, long_name, long_length) == 0 && arg[long_length] == '=') {
        *value = arg + long_length + 1;
        return 1;
    }
    if (short_name != NULL && strncmp(arg, short_name, 2) == 0 &&
        arg[2] != '\0') {
        *value = arg + 2;
        return 1;
    }
    if (strcmp(arg, long_name) != 0 &&
        (short_name == NULL || strcmp(arg, short_name) != 0))
        return 0;
    if (i + 1 >= argc) return -1;
    *value = argv[i + 1];
    return 2;
}

/* A heading level: one digit from 1 to 4. */
static int parse_level(const char *text, int *level, char *error,
                       size_t error_cap)
{
    if (text[0] < '1' || text[0] > '4' || text[1] != '\0')
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "--heading-level: expected 1, 2, 3 or 4, got \"%s\"", text);
    *level = text[0] - '0';
    return 0;
}

/* --title and --heading-level: how many arguments argv[i] took (0 if it is
 * neither, -1 when it is wrong: error says why). */
static int document_option(cli_args *args, char **argv, int argc, int i,
                           char *error, size_t error_cap)
{
    const char *value;
    int taken = value_option(argv, argc, i, "--title", NULL, &value);
    if (taken > 0) args->title = value;
    if (taken == 0) {
        taken = value_option(argv, argc, i, "--heading-level", NULL, &value);
        if (taken > 0 &&
            parse_level(value, &args->heading_level, error, error_cap) != 0)
            return -1;
    }
    if (taken < 0)
        fail(error, error_cap, EXIT_BAD_INPUT, "%s needs a value; " USAGE,
             argv[i]);
    return taken;
}

/* --step's value: a step number from 1. */
static int parse_step(const char *text, int *step, char *error,
                      size_t error_cap)
{
    char *end;
    errno = 0;
    const long value = strtol(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 ||
        value < 1 || value > INT_MAX)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "--step: expected a step number from 1, got \"%s\"", text);
    *step = (int)value;
    return 0;
}

/* --outline and --step need --format steps; --allow-none, attn check. */
static int check_step_options(const cli_args *args, char *error,
                              size_t error_cap)
{
    if ((args->outline || args->step > 0) &&
        (args->check || args->format != ATTN_FORMAT_STEPS))
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "%s needs --format steps (not attn check)",
                    args->outline ? "--outline" : "--step");
    if (args->outline && args->step > 0)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "--outline and --step: one or the other");
    if (args->allow_none && !args->check)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "--allow-none is an option of attn check");
    return 0;
}

static int parse_args(cli_args *args, int argc, char **argv, char *error,
                      size_t error_cap)
{
    memset(args, 0, sizeof *args);
    args->format = ATTN_FORMAT_JSON;
    args->max_bytes = ATTN_PROBLEM_DEFAULT_MAX_BYTES;
    int only_files = 0; /* after "--" */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value;
        int taken = only_files
                        ? 0
                        : value_option(argv, argc, i, "--format", "-f", &value);
        if (taken < 0)
            return fail(error, error_cap, EXIT_BAD_INPUT,
                        "%s needs a value (json, text, markdown, latex or "
                        "steps); " USAGE,
                        arg);
        if (taken > 0) {
            if (parse_format(value, &args->format, error, error_cap) != 0)
                return EXIT_BAD_INPUT;
            args->format_given = 1;
            i += taken - 1;
            continue;
        }
        taken = only_files
                    ? 0
                    : document_option(args, argv, argc, i, error, error_cap);
        if (taken < 0) return EXIT_BAD_INPUT;
        if (taken > 0) {
            i += taken - 1;
            continue;
        }
        taken = only_files
                    ? 0
                    : value_option(argv, argc, i, "--step", NULL, &value);
        if (taken < 0)
            return fail(error, error_cap, EXIT_BAD_INPUT,
                        "--step needs a step number; " USAGE);
        if (taken > 0) {
            if (parse_step(value, &args->step, error, error_cap) != 0)
                return EXIT_BAD_INPUT;
            i += taken - 1;
            continue;
        }
        taken = only_files
                    ? 0
                    : value_option(argv, argc, i, "--output", "-o", &value);
        if (taken == 0 && !only_files)
            taken = value_option(argv, argc, i, "--max-bytes", NULL, &value);
        if (taken < 0)
            return fail(error, error_cap, EXIT_BAD_INPUT,
                        "%s needs a value; " USAGE, arg);
        if (taken > 0) {
            if (arg[1] == 'o' || strncmp(arg, "--output", 8) == 0) {
                if (*value == '\0')
                    return fail(error, error_cap, EXIT_BAD_INPUT,
                                "%s needs a file name; " USAGE, arg);
                args->output = value;
            } else if (attn_cli_parse_bytes(value, &args->max_bytes, error,
                                            error_cap) != 0) {
                return EXIT_BAD_INPUT;
            }
            i += taken - 1;
        } else if (!only_files && strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (!only_files &&
                   (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
            args->help = 1;
        } else if (!only_files && strcmp(arg, "--version") == 0) {
            args->version = 1;
        } else if (!only_files && strcmp(arg, "--outline") == 0) {
            args->outline = 1;
        } else if (!only_files && strcmp(arg, "--allow-none") == 0) {
            args->allow_none = 1;
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
 * NUL in *length; NULL on a read error, when memory runs out, or (errno
 * EFBIG) when the stream holds more than `limit` bytes. */
static char *read_stream(FILE *in, size_t *length, size_t limit)
{
    /* Never more than limit + 2 bytes: limit + 1 read tells it is too
     * long, and the NUL. */
    const size_t most = limit <= SIZE_MAX - 2 ? limit + 2 : SIZE_MAX;
    size_t cap = READ_CHUNK < most ? READ_CHUNK : most, used = 0;
    char *text = malloc(cap);
    while (text != NULL) {
        used += fread(text + used, 1, cap - used - 1, in);
        if (ferror(in)) break;
        if (used > limit) {
            errno = EFBIG;
            break;
        }
        if (feof(in)) {
            text[used] = '\0';
            *length = used;
            return text;
        }
        const size_t grown_cap = cap <= most / 2 ? cap * 2 : most;
        char *grown = realloc(text, grown_cap);
        if (grown == NULL) break;
        text = grown;
        cap = grown_cap;
    }
    free(text);
    return NULL;
}

static int read_input(const char *path, size_t limit, char **text,
                      size_t *length, char *error, size_t error_cap)
{
    FILE *in = path != NULL ? fopen(path, "rb") : stdin;
    if (in == NULL)
        return fail(error, error_cap, EXIT_BAD_INPUT, "cannot open %s: %s",
                    path, strerror(errno));
    errno = 0;
    *text = read_stream(in, length, limit);
    const int read_errno = errno;
    if (path != NULL) fclose(in);
    if (*text == NULL && read_errno == EFBIG)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "%s holds more than %zu bytes of JSON, the limit "
                    "(--max-bytes)",
                    path != NULL ? path : "standard input", limit);
    if (*text == NULL)
        return fail(error, error_cap,
                    read_errno == ENOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT,
                    "cannot read %s: %s",
                    path != NULL ? path : "standard input",
                    read_errno != 0 ? strerror(read_errno) : "read error");
    return 0;
}

/* ---- Running and output ---- */

/* ATTN_ERR_TOO_LARGE is the input's fault: 2, as for any bad problem. */
static int exit_status_for(int status)
{
    return status == ATTN_ERR_NOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT;
}

/* The input read and parsed within args->max_bytes (the text and its JSON
 * tree count against it): *text for the caller to free, *root to delete. */
static int read_json(const cli_args *args, char **text, size_t *length,
                     cJSON **root, char *error, size_t error_cap)
{
    const int exit_status = read_input(args->path, args->max_bytes, text,
                                       length, error, error_cap);
    if (exit_status != 0) return exit_status;
    const int status = attn_json_parse_limited(
        root, *text, *length, args->max_bytes, error, error_cap);
    if (status == ATTN_OK) return 0;
    free(*text);
    return exit_status_for(status);
}

/* 1 when the text is a check file (docs/check.md): an object with
 * "printed" or "printedDecimals". */
static int is_check_file(const char *text, size_t length)
{
    cJSON *root = NULL;
    char ignored[1];
    if (attn_json_parse(&root, text, length, ignored, sizeof ignored) !=
        ATTN_OK)
        return 0;
    const int check =
        cJSON_IsObject(root) &&
        (cJSON_GetObjectItemCaseSensitive(root, "printed") != NULL ||
         cJSON_GetObjectItemCaseSensitive(root, "printedDecimals") != NULL);
    cJSON_Delete(root);
    return check;
}

/* The input's problem, read by the library within args->max_bytes (the
 * text and its parse count against it); the text is freed before the
 * problem runs. */
static int read_problem(attn_problem **problem, const cli_args *args,
                        char *error, size_t error_cap)
{
    char *text;
    size_t length;
    const int exit_status = read_input(args->path, args->max_bytes, &text,
                                       &length, error, error_cap);
    if (exit_status != 0) return exit_status;
    const int status = attn_problem_read_json(problem, error, text, NULL,
                                              "--max-bytes", length,
                                              args->max_bytes, error_cap);
    /* A check file given without "check": say so, rather than refuse
     * "printed" as a field of the problem. */
    const int check = status != ATTN_OK && status != ATTN_ERR_TOO_LARGE &&
                      status != ATTN_ERR_NOMEM && is_check_file(text, length);
    free(text);
    if (check)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "printed: this is a check file; run attn check on it "
                    "(attn alone computes a problem without \"printed\")");
    return status == ATTN_OK ? 0 : exit_status_for(status);
}

/* A result as it is formatted: held until it passes HOLD_BYTES, so that
 * a result of that size (or one whose formatting fails) reaches the
 * output whole or not at all; past that, written through in pieces, so
 * that memory stays bounded whatever the result's length. */
enum { HOLD_BYTES = 1 << 20 };

typedef struct streamed {
    const char *path;
    char *held; /* [HOLD_BYTES] */
    size_t length;
    int opened;
    attn_cli_output out;
    int exit_status; /* of opening the output */
    char *error;
    size_t error_cap;
} streamed;

static void write_streamed(void *context, const char *bytes, size_t count)
{
    streamed *stream = context;
    if (stream->exit_status != 0) return;
    if (!stream->opened && stream->length + count <= HOLD_BYTES) {
        memcpy(stream->held + stream->length, bytes, count);
        stream->length += count;
        return;
    }
    if (!stream->opened) {
        stream->exit_status = attn_cli_output_open(
            &stream->out, stream->path, stream->error, stream->error_cap);
        if (stream->exit_status != 0) return;
        stream->opened = 1;
        attn_cli_output_write(&stream->out, stream->held, stream->length);
    }
    attn_cli_output_write(&stream->out, bytes, count);
}

/* The formatted result to the output; destroys problem. */
static int run_problem(attn_problem *problem, const cli_args *args, char *error,
                       size_t error_cap)
{
    const int format = args->outline ? ATTN_FORMAT_STEP_OUTLINE : args->format;
    streamed stream = {args->output, malloc(HOLD_BYTES), 0, 0, {0}, 0,
                       error,        error_cap};
    int status = stream.held == NULL
                     ? ATTN_ERR_NOMEM
                     : attn_problem_set_document(problem, args->title,
                                                 args->heading_level);
    if (status == ATTN_OK) status = attn_problem_run(problem);
    if (status == ATTN_OK && args->step > 0) {
        /* One step's equations: measured, then written whole. */
        status = attn_problem_format_equations(problem, args->step, NULL, 0,
                                               &stream.length);
        char *whole = status != ATTN_OK || stream.length < HOLD_BYTES
                          ? stream.held
                          : realloc(stream.held, stream.length + 1);
        if (whole == NULL)
            status = ATTN_ERR_NOMEM;
        else
            stream.held = whole;
        if (status == ATTN_OK)
            status = attn_problem_format_equations(
                problem, args->step, stream.held, stream.length + 1,
                &stream.length);
    } else if (status == ATTN_OK) {
        status = attn_problem_format_to(problem, format, write_streamed,
                                        &stream);
    }
    if (status != ATTN_OK)
        snprintf(error, error_cap, "%s",
                 *attn_problem_error(problem) != '\0'
                     ? attn_problem_error(problem)
                     : attn_status_text(status));
    attn_problem_destroy(problem);
    int exit_status = status == ATTN_OK ? stream.exit_status
                                        : exit_status_for(status);
    if (stream.opened) {
        const int finished = attn_cli_output_finish(
            &stream.out, exit_status == 0, error, error_cap);
        if (exit_status == 0) exit_status = finished;
    } else if (exit_status == 0) {
        exit_status = attn_cli_write_output(args->output, stream.held,
                                            stream.length, error, error_cap);
    }
    free(stream.held);
    return exit_status;
}

/* attn check: the check's report of the printed numbers beside the
 * problem's fields into a new buffer; *errata how many differ. */
static int run_check(cJSON *root, const char *text, size_t text_length,
                     const cli_args *args, char **output, size_t *length,
                     int *errata, char *error, size_t error_cap)
{
    *output = NULL;
    if (args->format == ATTN_FORMAT_STEPS)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "attn check: --format is json, text, markdown or latex");
    if (!cJSON_IsObject(root))
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "expected a problem object with \"printed\", got %s",
                    attn_json_describe(root));
    cJSON *printed = cJSON_DetachItemFromObjectCaseSensitive(root, "printed");
    cJSON *decimals = cJSON_DetachItemFromObjectCaseSensitive(
        root, "printedDecimals");
    attn_problem *problem = NULL;
    attn_check *check = NULL;
    int status;
    if (printed == NULL) {
        status = ATTN_ERR_INPUT;
        fail(error, error_cap, EXIT_BAD_INPUT,
             "printed: missing (the numbers to check, by result name, "
             "beside the problem's fields)");
    } else {
        status = attn_problem_from_json_limited(
            &problem, root, NULL, args->max_bytes, error, error_cap);
    }
    if (status == ATTN_OK && attn_problem_run(problem) != ATTN_OK) {
        status = ATTN_ERR_INPUT;
        fail(error, error_cap, EXIT_BAD_INPUT, "%s",
             attn_problem_error(problem));
    }
    if (status == ATTN_OK) {
        status = attn_check_create(&check, problem);
        if (status != ATTN_OK)
            fail(error, error_cap, EXIT_INTERNAL, "out of memory");
    }
    if (status == ATTN_OK)
        status = attn_check_printed_from_json(check, printed, decimals, text,
                                              text_length, NULL, error,
                                              error_cap);
    if (status == ATTN_OK) {
        status = attn_check_run(check, errata);
        /* Exit 0, "all 0 hold", would pass a file whose keys are all
         * misspelt. */
        const int nothing = status == ATTN_OK && !args->allow_none &&
                            attn_check_checked(check) == 0;
        if (nothing) status = ATTN_ERR_INPUT;
        if (status == ATTN_OK)
            status = attn_check_format(check, args->format, NULL, 0, length);
        if (status == ATTN_OK) {
            *output = malloc(*length + 1);
            status = *output == NULL
                         ? ATTN_ERR_NOMEM
                         : attn_check_format(check, args->format, *output,
                                             *length + 1, length);
        }
        if (nothing)
            fail(error, error_cap, 0,
                 "printed: nothing to check: no key of it names a result of "
                 "this problem (such as scores, scaled, weights or output)");
        else if (status != ATTN_OK)
            fail(error, error_cap, 0, "%s",
                 *attn_check_error(check) != '\0' ? attn_check_error(check)
                                                  : attn_status_text(status));
    }
    if (status != ATTN_OK) {
        free(*output);
        *output = NULL;
    }
    attn_check_destroy(check);
    attn_problem_destroy(problem);
    cJSON_Delete(printed);
    cJSON_Delete(decimals);
    return status == ATTN_OK ? 0 : exit_status_for(status);
}

/* The input's problem, run and formatted to the output. */
static int solve_input(const cli_args *args, char *error, size_t error_cap)
{
    attn_problem *problem;
    const int exit_status = read_problem(&problem, args, error, error_cap);
    if (exit_status != 0) return exit_status;
    return run_problem(problem, args, error, error_cap);
}

/* attn check: the input read as for a problem, then checked (run_check
 * reads the text again: how each printed number was written). */
static int check_input(const cli_args *args, char **output, size_t *length,
                       int *errata, char *error, size_t error_cap)
{
    char *text;
    size_t text_length;
    cJSON *root;
    const int exit_status = read_json(args, &text, &text_length, &root, error,
                                      error_cap);
    if (exit_status != 0) return exit_status;
    const int checked = run_check(root, text, text_length, args, output, length,
                                  errata, error, error_cap);
    free(text);
    cJSON_Delete(root);
    return checked;
}

/* attn answer: the verdict on the learner's value; 0 when right, 1 when
 * not, 2 for bad input. */
static int answer_input(const cli_args *args, char *error, size_t error_cap)
{
    if (args->format != ATTN_FORMAT_JSON && args->format != ATTN_FORMAT_TEXT)
        return fail(error, error_cap, EXIT_BAD_INPUT,
                    "attn answer: --format is text or json");
    attn_problem *problem;
    int exit_status = read_problem(&problem, args, error, error_cap);
    if (exit_status != 0) return exit_status;
    char *output;
    size_t length;
    int right;
    exit_status = attn_cli_answer(problem, args->cell, args->typed,
                                  args->format == ATTN_FORMAT_JSON, &output,
                                  &length, &right, error, error_cap);
    if (output == NULL) return exit_status;
    const int written = attn_cli_write_output(args->output, output, length,
                                              error, error_cap);
    free(output);
    return written != 0 ? written : exit_status;
}

/* Input to output; 0, or an exit status with the message in error. */
static int run_cli(const cli_args *args, char *error, size_t error_cap)
{
    if (args->cell != NULL) return answer_input(args, error, error_cap);
    if (!args->check) return solve_input(args, error, error_cap);
    char *output = NULL;
    size_t length = 0;
    int errata = 0;
    int exit_status = check_input(args, &output, &length, &errata, error,
                                  error_cap);
    if (exit_status != 0) return exit_status;
    exit_status = attn_cli_write_output(args->output, output, length, error,
                                        error_cap);
    free(output);
    /* attn check: 1 when a printed number does not hold. */
    return exit_status == 0 && errata > 0 ? 1 : exit_status;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "train") == 0)
        return attn_cli_train(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "model") == 0)
        return attn_cli_model(argc - 1, argv + 1);
    const int check = argc > 1 && strcmp(argv[1], "check") == 0;
    /* attn answer CELL VALUE: both before any option (a VALUE may be
     * negative, "-0.25"). */
    const int answer = argc > 1 && strcmp(argv[1], "answer") == 0;
    char error[ERROR_CAP] = "";
    cli_args args;
    if (answer && (argc < 4 || (argv[2][0] == '-' && argv[2][1] != '\0')))
        return fprintf(stderr,
                       "attn: attn answer needs CELL and VALUE first, as "
                       "attn answer weights:0:1 0.40 problem.json\n"),
               EXIT_BAD_INPUT;
    const int skipped = answer ? 3 : check;
    int exit_status = parse_args(&args, argc - skipped, argv + skipped, error,
                                 sizeof error);
    args.check = check;
    if (answer) {
        args.cell = argv[2];
        args.typed = argv[3];
        if (!args.format_given) args.format = ATTN_FORMAT_TEXT;
    }
    if (exit_status == 0)
        exit_status = check_step_options(&args, error, sizeof error);
    if (exit_status == 0 && (args.help || args.version)) {
        fputs(args.help ? help_text : "attn " ATTN_CLI_VERSION "\n", stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            exit_status = fail(error, sizeof error, EXIT_INTERNAL,
                               "cannot write the result: %s", strerror(errno));
    } else if (exit_status == 0) {
        exit_status = run_cli(&args, error, sizeof error);
    }
    /* attn check's 1 for errata says nothing more on standard error. */
    if (exit_status != 0 && error[0] != '\0')
        fprintf(stderr, "attn: %s\n", error);
    return exit_status;
}
