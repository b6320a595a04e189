/* Internal: described, validated option sets (a family's synthesis and cloning options).
 *
 * A family keeps its options in a plain struct of its own and describes each field once: name, type,
 * where it lives in the struct, its range and a line of documentation. From that one table this file
 * parses a JSON object into the struct (unknown names, wrong types and out-of-range values are one
 * clear error that names the option), and describes the options with their current values
 * (vox_engine_options), so the C ABI, the Python dataclasses and `vox say --help` agree.
 *
 * Values layered in order (family defaults, the model's, the voice's, the caller's) are simply
 * applied one after the other onto the same struct.
 */
#ifndef VOX_OPTIONS_H
#define VOX_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "strbuf.h"
#include "vox.h"

typedef enum vx_opt_type {
    VX_OPT_BOOL,   /* int32_t: 0 or 1 (JSON true/false) */
    VX_OPT_INT,    /* int32_t within [min, max] (JSON integer) */
    VX_OPT_FLOAT,  /* float within [min, max], finite (JSON number); min_open/max_open exclude the ends */
    VX_OPT_ENUM,   /* int32_t: the index of the JSON string in `choices` ("stream|reference") */
    VX_OPT_STRING, /* const char *: a JSON string or null, pointing into the parsed JSON kept by the caller */
    VX_OPT_JSON    /* const vox_json *: a JSON object or null, inside the parsed JSON kept by the caller */
} vx_opt_type;

typedef struct vx_option {
    const char *name;
    vx_opt_type type;
    size_t offset;           /* offsetof(the family's struct, field) */
    double min, max;         /* INT / FLOAT */
    int min_open, max_open;  /* FLOAT: the bound itself is excluded */
    const char *choices;     /* ENUM: names separated by '|' */
    const char *doc;         /* one line for --help and the options JSON */
} vx_option;

typedef struct vx_option_set {
    const vx_option *opts;
    size_t n;
    size_t size;             /* sizeof the family's struct */
} vx_option_set;

/* Applies the members of JSON object `obj` to `dst`. `what` names the source for messages ("options",
 * "the voice's defaults"); `ignore` is a NULL-terminated list of member names that belong to someone
 * else (e.g. "seed" in voice defaults) and are skipped. Returns VOX_ERR_INVALID_ARGUMENT naming the
 * option on a bad member; dst is then partly updated (callers apply onto a copy). */
vox_status vx_options_apply(const vx_option_set *set, void *dst, const vox_json *obj, const char *what,
                            const char *const *ignore);
/* As vx_options_apply for the members that name an option of `set`; the others are left (they belong
 * to another set in the same object). */
vox_status vx_options_apply_some(const vx_option_set *set, void *dst, const vox_json *obj, const char *what);
/* Parses `json` (NULL or "" is an empty object) into a document the caller keeps alive as long as the
 * STRING/JSON fields applied from it are used. */
vox_status vx_options_parse(const char *json, const char *what, vox_json_doc **out);
/* Appends [{"name", "type", "default", "min", "max", "choices", "doc"}, ...] describing `set` with the
 * values in `cur` as defaults. */
void vx_options_describe(const vx_option_set *set, const void *cur, vx_buf *b);
/* Appends the values in `cur` as a JSON object ({"temperature": 0.9, ...}). */
void vx_options_values(const vx_option_set *set, const void *cur, vx_buf *b);

#endif
