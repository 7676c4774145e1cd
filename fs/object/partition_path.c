#include "partition_path.h"

#include <string.h>

bool partition_name(const char *name, size_t n)
{
    return n > 1 && name[0] != '_' && name[0] != '.' && memchr(name, '=', n) != NULL;
}

const char *partition_dir_name(const char *dir_key, size_t *n)
{
    size_t end = strlen(dir_key);
    if (end && dir_key[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && dir_key[start - 1] != '/')
        start--;
    *n = end - start;
    return dir_key + start;
}

size_t partition_table_dir_len(const char *key)
{
    const char *slash = strrchr(key, '/');
    if (!slash)
        return 0;
    size_t end = (size_t)(slash - key) + 1; /* the directory, with its '/' */
    for (unsigned level = 0; level < PARTITION_MAX_DEPTH && end > 1; level++) {
        size_t start = end - 1; /* the '/' ending the last component */
        while (start > 0 && key[start - 1] != '/')
            start--;
        if (!partition_name(key + start, end - 1 - start))
            break;
        end = start;
    }
    return end;
}
