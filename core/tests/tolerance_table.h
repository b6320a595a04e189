/* The C tests' view of verify/tolerances.toml (THE tolerance table): the limit of a row, read from the
 * file (the tests run in the source root). Only the table's simple form is understood: a [section]
 * line, then `max = number` / `min = number`. A missing row or key fails the test loudly. */
#ifndef VOX_TEST_TOLERANCE_TABLE_H
#define VOX_TEST_TOLERANCE_TABLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double tolerance_row(const char *row, const char *key) {
    FILE *f = fopen("verify/tolerances.toml", "r");
    if (!f) {
        fprintf(stderr, "tolerance_row: verify/tolerances.toml not found (run from the source root)\n");
        exit(2);
    }
    char line[512], want[256];
    snprintf(want, sizeof want, "[%s]", row);
    int in = 0;
    double v = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '[') {
            in = !strcmp(line, want);
            continue;
        }
        size_t kl = strlen(key);
        if (in && !strncmp(line, key, kl) && (line[kl] == ' ' || line[kl] == '=')) {
            const char *eq = strchr(line, '=');
            if (eq) {
                v = strtod(eq + 1, NULL);
                found = 1;
            }
        }
    }
    fclose(f);
    if (!found) {
        fprintf(stderr, "tolerance_row: verify/tolerances.toml has no %s in [%s]\n", key, row);
        exit(2);
    }
    return v;
}

#endif
