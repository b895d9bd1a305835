/* folder.c: a model loaded from a folder holding config.json and
 * model.safetensors, each file's size checked against the model's limit
 * before it is read whole. */
#include "kernels/kernels.h"
#include "lm/lm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* config.json is read whole up to this size. */
enum { CONFIG_MAX_BYTES = 1024 * 1024, PATH_CAP = 4096 };

/* The size of an open file, or -1. */
static long file_size(FILE *f)
{
    if (fseek(f, 0, SEEK_END) != 0) return -1;
    const long size = ftell(f);
    if (fseek(f, 0, SEEK_SET) != 0) return -1;
    return size;
}

static int cannot_read(attn_model *model, const char *path)
{
    return attn__model_error(model, ATTN_ERR_INPUT, "cannot read %s: %s", path,
                             errno != 0 ? strerror(errno) : "a read failed");
}

/* Reads the file at path whole into a block from the model's allocator,
 * refused (before reading) when it is larger than `most` or the limit
 * with `also` bytes held; `what` names them in the message. */
static int read_whole(attn_model *model, unsigned char **bytes, size_t *size,
                      const char *path, size_t most, size_t also,
                      const char *what)
{
    *bytes = NULL;
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return cannot_read(model, path);
    const long length = file_size(f);
    int status = ATTN_OK;
    if (length < 0) {
        status = cannot_read(model, path);
    } else if ((unsigned long)length > most) {
        status = attn__model_error(model, ATTN_ERR_TOO_LARGE,
                                   "%s has %ld bytes, more than the %zu "
                                   "read",
                                   path, length, most);
    } else {
        *size = (size_t)length;
        *bytes = attn__model_allocate(model, &status, *size, also, what);
        if (*bytes != NULL && fread(*bytes, 1, *size, f) != *size) {
            status = cannot_read(model, path);
            attn__model_release(model, *bytes);
            *bytes = NULL;
        }
    }
    fclose(f);
    return status;
}

/* folder/name into path, or ATTN_ERR_INPUT when it does not fit. */
static int join(attn_model *model, char *path, const char *folder,
                const char *name)
{
    const int n = snprintf(path, PATH_CAP, "%s/%s", folder, name);
    if (n > 0 && n < PATH_CAP) return ATTN_OK;
    return attn__model_error(model, ATTN_ERR_INPUT,
                             "the folder's path is longer than %d bytes",
                             PATH_CAP - 100);
}

/* The config, from folder/config.json. */
static int read_config(attn_model *model, attn_decoder_config *config,
                       const char *folder)
{
    char path[PATH_CAP];
    unsigned char *json = NULL;
    size_t length = 0;
    int status = join(model, path, folder, "config.json");
    if (status == ATTN_OK)
        status = read_whole(model, &json, &length, path, CONFIG_MAX_BYTES, 0,
                            "config.json");
    if (status != ATTN_OK) return status;
    char message[ATTN__MODEL_ERROR_CAP - 32];
    status = attn_decoder_config_parse(config, message, sizeof message,
                                       (const char *)json, length);
    attn__model_release(model, json);
    if (status != ATTN_OK)
        return attn__model_error(model, status, "%s", message);
    return ATTN_OK;
}

int attn_model_load_folder(attn_model *model, const char *folder)
{
    if (model == NULL) return ATTN_ERR_NULL;
    if (folder == NULL)
        return attn__model_error(model, ATTN_ERR_NULL, "no folder given");
    int status = attn__model_check_unloaded(model);
    attn_decoder_config config;
    if (status == ATTN_OK) status = read_config(model, &config, folder);
    if (status != ATTN_OK) return status;
    /* The file is held while the weights are read from it: both count. */
    const size_t weights = attn__model_weight_bytes(&config);
    size_t also;
    if (weights == 0 ||
        attn__add_size(&also, weights, attn__model_scratch_bytes(&config)) !=
            ATTN_OK)
        return attn__model_error(model, ATTN_ERR_TOO_LARGE,
                                 "the model's weights take more bytes than "
                                 "this machine can count");
    char path[PATH_CAP];
    unsigned char *file = NULL;
    size_t size = 0;
    status = join(model, path, folder, "model.safetensors");
    if (status == ATTN_OK)
        status = read_whole(model, &file, &size, path, SIZE_MAX, also,
                            "model.safetensors read whole and its weights as "
                            "doubles");
    if (status != ATTN_OK) return status;
    status = attn__model_load_parsed(model, &config, file, size, size);
    attn__model_release(model, file);
    return status;
}
