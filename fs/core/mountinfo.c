#include "mountinfo.h"

#include <stdio.h>
#include <string.h>

bool mountinfo_parse_line(const char *line, char *mp, unsigned long mpcap, unsigned *major,
                          unsigned *minor)
{
    /* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ..." */
    unsigned maj, min;
    int pos = 0;
    if (mpcap == 0 || sscanf(line, "%*u %*u %u:%u %*s %n", &maj, &min, &pos) != 2 || pos == 0)
        return false;
    const char *p = line + pos;
    unsigned long o = 0;
    for (; *p && *p != ' ' && *p != '\n'; p++) {
        if (o + 1 >= mpcap)
            return false;
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
            p[3] <= '7') {
            mp[o++] = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
            p += 3;
        } else {
            mp[o++] = *p;
        }
    }
    if (o == 0)
        return false;
    mp[o] = 0;
    if (major)
        *major = maj;
    if (minor)
        *minor = min;
    return true;
}

bool mountinfo_find(const char *path, unsigned *major, unsigned *minor)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return false;
    char line[8192], mp[4096];
    bool found = false;
    unsigned maj = 0, min = 0;
    /* The last match wins: a later mount on the same path hides earlier ones. */
    while (fgets(line, sizeof line, f)) {
        unsigned a, b;
        if (mountinfo_parse_line(line, mp, sizeof mp, &a, &b) && strcmp(mp, path) == 0) {
            found = true;
            maj = a;
            min = b;
        }
    }
    fclose(f);
    if (found && major)
        *major = maj;
    if (found && minor)
        *minor = min;
    return found;
}
