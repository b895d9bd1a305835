/* Every test vector in the *.json files of tests/vectors through the JSON
 * adapter and the attn_problem layer: each expected value must match the
 * result of the same name. One cmocka test per vector; run from the
 * repository root. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "allclose.h"
#include "attention.h"
#include "problem_json.h"

#define VECTOR_DIR "tests/vectors"
#define DEFAULT_RTOL 1e-9
#define DEFAULT_ATOL 1e-12

enum { NAME_CAP = 128, MESSAGE_CAP = 512 };

/* One vector and what its test holds, freed by the teardown even when an
 * assertion fails half way. */
typedef struct vector_case {
    const cJSON *vector; /* {id, input, expected, tolerance?, ...} */
    char test_name[NAME_CAP + 64];
    attn_problem *problem;
    attn_json_tensor expected;
} vector_case;

/* ---- Comparing one expected entry ---- */

/* "weights[1][2]" for entry `flat` of a result of this rank and dims. */
static void entry_name(char *out, size_t cap, const char *name, int rank,
                       const int *dims, size_t flat)
{
    size_t index[3] = {0, 0, 0};
    for (int d = rank - 1; d >= 0; d--) {
        index[d] = flat % (size_t)dims[d];
        flat /= (size_t)dims[d];
    }
    int used = snprintf(out, cap, "%s", name);
    for (int d = 0; d < rank && used > 0 && (size_t)used < cap; d++)
        used += snprintf(out + used, cap - (size_t)used, "[%zu]", index[d]);
}

static void assert_result_matches(vector_case *test, const char *name,
                                  const cJSON *expected, double rtol)
{
    char message[MESSAGE_CAP];
    if (attn_json_read_tensor(&test->expected, expected, name,
                              ATTN_JSON_NULL_IS_MINUS_INF |
                                  ATTN_JSON_ALLOW_SCALAR,
                              NULL, message, sizeof message) != ATTN_OK)
        fail_msg("expected value %s", message);

    int rank, dims[3];
    const double *actual;
    if (attn_problem_result(test->problem, name, &rank, dims, &actual) !=
        ATTN_OK)
        fail_msg("%s", attn_problem_error(test->problem));
    const attn_json_tensor *want = &test->expected;
    int same_shape = rank == want->rank;
    for (int d = 0; same_shape && d < rank; d++)
        same_shape = dims[d] == want->dims[d];
    if (!same_shape)
        fail_msg("%s has rank %d [%d, %d, %d], expected rank %d "
                 "[%d, %d, %d]",
                 name, rank, dims[0], dims[1], dims[2], want->rank,
                 want->dims[0], want->dims[1], want->dims[2]);

    for (size_t i = 0; i < want->count; i++) {
        if (!close_enough(actual[i], want->data[i], rtol, DEFAULT_ATOL)) {
            char entry[NAME_CAP];
            entry_name(entry, sizeof entry, name, rank, dims, i);
            fail_msg("%s is %.17g, expected %.17g (rtol %g, atol %g)", entry,
                     actual[i], want->data[i], rtol, DEFAULT_ATOL);
        }
    }
    attn_json_tensor_free(&test->expected, NULL);
}

/* Walks `expected` as the JSON result nests it: objects and arrays of
 * objects ("heads": [{...}]) become dotted names ("heads.0.weights"). */
static void assert_results_match(vector_case *test, const char *prefix,
                                 const cJSON *expected, double rtol)
{
    const cJSON *member;
    cJSON_ArrayForEach(member, expected)
    {
        char name[NAME_CAP];
        snprintf(name, sizeof name, "%s%s", prefix, member->string);
        if (cJSON_IsObject(member)) {
            strncat(name, ".", sizeof name - strlen(name) - 1);
            assert_results_match(test, name, member, rtol);
        } else if (cJSON_IsArray(member) && cJSON_IsObject(member->child)) {
            int i = 0;
            const cJSON *item;
            cJSON_ArrayForEach(item, member)
            {
                char item_prefix[NAME_CAP + 16];
                snprintf(item_prefix, sizeof item_prefix, "%s.%d.", name, i++);
                assert_results_match(test, item_prefix, item, rtol);
            }
        } else {
            assert_result_matches(test, name, member, rtol);
        }
    }
}

static void test_vector_matches_its_exact_values(void **state)
{
    vector_case *test = *state;
    const cJSON *tolerance = cJSON_GetObjectItemCaseSensitive(test->vector,
                                                              "tolerance");
    if (tolerance != NULL && !cJSON_IsNumber(tolerance))
        fail_msg("tolerance must be a number (relative)");
    const double rtol = tolerance != NULL ? tolerance->valuedouble
                                          : DEFAULT_RTOL;

    char message[MESSAGE_CAP];
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(test->vector,
                                                          "input");
    if (attn_problem_from_json(&test->problem, input, NULL, message,
                               sizeof message) != ATTN_OK)
        fail_msg("%s", message);
    if (attn_problem_run(test->problem) != ATTN_OK)
        fail_msg("%s", attn_problem_error(test->problem));

    const cJSON *expected = cJSON_GetObjectItemCaseSensitive(test->vector,
                                                             "expected");
    assert_true(cJSON_GetArraySize(expected) > 0);
    assert_results_match(test, "", expected, rtol);
}

static int release_case(void **state)
{
    vector_case *test = *state;
    attn_problem_destroy(test->problem);
    test->problem = NULL;
    attn_json_tensor_free(&test->expected, NULL);
    return 0;
}

/* ---- Loading the vector files ---- */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of the *.json files in VECTOR_DIR, NULL-terminated. */
static char **vector_files(void)
{
    DIR *dir = opendir(VECTOR_DIR);
    if (dir == NULL) return NULL;
    size_t count = 0, cap = 8;
    char **names = malloc(cap * sizeof *names);
    for (struct dirent *entry; names != NULL && (entry = readdir(dir));) {
        const size_t length = strlen(entry->d_name);
        if (length < 5 || strcmp(entry->d_name + length - 5, ".json") != 0)
            continue;
        if (count + 1 == cap) {
            char **grown = realloc(names, 2 * cap * sizeof *names);
            if (grown == NULL) break;
            names = grown;
            cap *= 2;
        }
        names[count++] = strdup(entry->d_name);
    }
    closedir(dir);
    if (names == NULL) return NULL;
    names[count] = NULL;
    qsort(names, count, sizeof *names, compare_names);
    return names;
}

static cJSON *parse_file(const char *name)
{
    char path[NAME_CAP * 2];
    snprintf(path, sizeof path, "%s/%s", VECTOR_DIR, name);
    FILE *file = fopen(path, "rb");
    if (file == NULL) return NULL;
    cJSON *root = NULL;
    if (fseek(file, 0, SEEK_END) == 0) {
        const long length = ftell(file);
        char *text = length >= 0 ? malloc((size_t)length + 1) : NULL;
        rewind(file);
        if (text != NULL &&
            fread(text, 1, (size_t)length, file) == (size_t)length) {
            text[length] = '\0';
            root = cJSON_Parse(text);
        }
        free(text);
    }
    fclose(file);
    if (root == NULL) fprintf(stderr, "test_vectors: cannot parse %s\n", path);
    return root;
}

/* A record is a vector when it has an input and expected results; other
 * records (claims.json's statements about printed numbers) have neither. */
static int is_vector(const cJSON *record)
{
    return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(record, "input")) &&
           cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(record, "expected"));
}

static void name_case(vector_case *test, const cJSON *vector, const char *file,
                      int index)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(vector, "id");
    if (cJSON_IsString(id))
        snprintf(test->test_name, sizeof test->test_name,
                 "vector %.*s (%s) matches its exact values", NAME_CAP,
                 id->valuestring, file);
    else
        snprintf(test->test_name, sizeof test->test_name,
                 "vector %s[%d] matches its exact values", file, index);
}

int main(void)
{
    char **files = vector_files();
    if (files == NULL || files[0] == NULL) {
        fprintf(stderr,
                "test_vectors: no *.json in %s (run from the "
                "repository root)\n",
                VECTOR_DIR);
        return 1;
    }
    size_t file_count = 0, vector_count = 0;
    while (files[file_count] != NULL) file_count++;
    cJSON **roots = calloc(file_count, sizeof *roots);
    int failed = roots == NULL;
    for (size_t f = 0; !failed && f < file_count; f++) {
        roots[f] = parse_file(files[f]);
        failed = !cJSON_IsArray(roots[f]);
        const cJSON *record;
        cJSON_ArrayForEach(record, roots[f]) vector_count += is_vector(record);
    }

    vector_case *cases = calloc(vector_count + 1, sizeof *cases);
    struct CMUnitTest *tests = calloc(vector_count + 1, sizeof *tests);
    failed = failed || cases == NULL || tests == NULL || vector_count == 0;
    size_t n = 0;
    for (size_t f = 0; !failed && f < file_count; f++) {
        int index = 0;
        const cJSON *record;
        cJSON_ArrayForEach(record, roots[f])
        {
            if (is_vector(record)) {
                cases[n].vector = record;
                name_case(&cases[n], record, files[f], index);
                tests[n] = (struct CMUnitTest){
                    cases[n].test_name, test_vector_matches_its_exact_values,
                    NULL, release_case, &cases[n]};
                n++;
            }
            index++;
        }
    }
    if (!failed)
        failed = _cmocka_run_group_tests("test_vectors", tests, n, NULL, NULL);
    else
        fprintf(stderr, "test_vectors: could not load the vectors\n");

    for (size_t f = 0; f < file_count; f++) {
        if (roots != NULL) cJSON_Delete(roots[f]);
        free(files[f]);
    }
    free(files);
    free(roots);
    free(cases);
    free(tests);
    return failed != 0;
}
