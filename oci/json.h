/* SPDX-License-Identifier: Apache-2.0 */
/* Internal JSON helpers for the oci/ module: a small document tree built
 * with yajl's event parser (which does not recurse, so hostile nesting is
 * caught by a counter instead of the C stack), typed readers that report
 * errors with the file name and JSON path, and a thin yajl_gen wrapper. */
#ifndef AR_OCI_JSON_H
#define AR_OCI_JSON_H

#include "oci.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

/* Values in one document, beyond which parsing stops (keeps a 16 MiB file
 * of "[0,0,0,..." from costing hundreds of megabytes of tree). */
#define OJ_MAX_VALUES (1u << 20)

/* Longest JSON path kept for error messages; longer ones end in "...". */
#define OJ_PATH_MAX 256

typedef enum
{
  OJ_NULL,
  OJ_BOOL,
  OJ_NUMBER,
  OJ_STRING,
  OJ_ARRAY,
  OJ_OBJECT
} oj_type;

typedef struct oj_member oj_member;
typedef struct oj_value oj_value;

struct oj_value
{
  oj_type type;
  size_t len; /* bytes of text, or number of items/members */
  size_t cap;
  union
  {
    bool boolean;
    char *text; /* OJ_STRING (may hold NULs) or OJ_NUMBER (as written) */
    oj_value *items;
    oj_member *members;
  };
};

struct oj_member
{
  char *key;
  size_t key_len;
  oj_value value;
};

/* Parse a whole document. On error *err reads "FILE: message". */
int oj_parse (const char *data, size_t len, const char *file, oj_value *out,
              ar_error_t **err);
void oj_value_clear (oj_value *v);

/* The member `key` of an object (oj_parse refuses an object with a
 * repeated key). NULL when absent or JSON null, which the runtime-spec
 * treats alike. */
const oj_value *oj_get (const oj_value *obj, const char *key);

/* A JSON path being built while descending: ".linux.namespaces[1].type". */
typedef struct
{
  char buf[OJ_PATH_MAX];
  size_t len;
} oj_path;

size_t oj_path_push_key (oj_path *p, const char *key, size_t key_len);
size_t oj_path_push_index (oj_path *p, size_t index);
static inline void
oj_path_pop (oj_path *p, size_t mark)
{
  p->len = mark;
  p->buf[mark] = '\0';
}

/* What readers carry: where errors go and where in the document we are. */
typedef struct
{
  const char *file;
  ar_error_t **err;
  oj_path path;
} oj_ctx;

/* "FILE: PATH: message" (the path part is left out at the top level). */
int oj_fail (oj_ctx *c, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* "FILE: PATH: expected WHAT, got number 3". */
int oj_fail_type (oj_ctx *c, const oj_value *v, const char *what);

/* A short, printable rendering of a value for error messages
 * (`string "foo"`, `number 3`, `array`). The result is malloc'd. */
char *oj_describe (const oj_value *v);

/* `s` in double quotes, escaped onto one line and cut when long. */
char *oj_quote (const char *s, size_t len);
/* `s` as a JSON string (for a line of JSON): control characters as
 * \u00XX, a byte that is no part of valid UTF-8 as U+FFFD, and at most
 * `max` bytes of `s`, cut on a character boundary with "..." inside the
 * quotes. */
char *oj_json_string (const char *s, size_t len, size_t max);

/* A reader converts one JSON value into the C object at `out`. On error it
 * returns -1 with *c->err set; whatever it already stored in `out` stays
 * there for the caller's free function. */
typedef int (*oj_reader) (oj_ctx *c, const oj_value *v, void *out);

/* Read obj[key] with `read` when present; leave `out` alone when absent. */
int oj_field (oj_ctx *c, const oj_value *obj, const char *key, oj_reader read,
              void *out);
/* Like oj_field, but absence is an error. */
int oj_required (oj_ctx *c, const oj_value *obj, const char *key,
                 oj_reader read, void *out);

/* Read a JSON array into a calloc'd C array of `elem_size` elements.
 * *items and *len are set before the elements are read, so a failure
 * part way leaves something the caller's free function handles. */
int oj_read_array (oj_ctx *c, const oj_value *v, size_t elem_size,
                   oj_reader read, void **items, size_t *len);

int oj_expect_object (oj_ctx *c, const oj_value *v);

/* Readers for scalars, string lists and string maps. `out` points to the
 * C type named after the reader (char *, bool, int64_t, oci_opt_u32, ...). */
int oj_read_string (oj_ctx *c, const oj_value *v, void *out);
int oj_read_bool (oj_ctx *c, const oj_value *v, void *out);
int oj_read_i64 (oj_ctx *c, const oj_value *v, void *out);
int oj_read_u64 (oj_ctx *c, const oj_value *v, void *out);
int oj_read_u32 (oj_ctx *c, const oj_value *v, void *out);
int oj_read_opt_bool (oj_ctx *c, const oj_value *v, void *out);
int oj_read_opt_i64 (oj_ctx *c, const oj_value *v, void *out);
int oj_read_opt_u64 (oj_ctx *c, const oj_value *v, void *out);
int oj_read_opt_u32 (oj_ctx *c, const oj_value *v, void *out);
int oj_read_opt_u16 (oj_ctx *c, const oj_value *v,
                     void *out); /* into oci_opt_u32 */
int oj_read_strv (oj_ctx *c, const oj_value *v, void *out); /* oci_strv */
int oj_read_map (oj_ctx *c, const oj_value *v, void *out);  /* oci_map */
/* An object's members, each read by `fn` with its key on the error path. */
typedef int (*oj_member_reader) (oj_ctx *c, const oj_member *m, void *out);
int
oj_each_member (oj_ctx *c, const oj_value *v, oj_member_reader fn, void *out);

/* Frees for the C types above. */
void oj_strv_clear (oci_strv *v);
void oj_map_clear (oci_map *m);

/* Emitting. The yajl_gen calls cannot fail for the inputs given here
 * (balanced maps/arrays, no validation), so the wrappers return nothing. */
yajl_gen oj_gen_new (bool pretty, const char *indent);
char *oj_gen_finish (yajl_gen g); /* malloc'd copy of the output; frees g */
/* A map's members without its braces ("" for an empty map), as the audit
 * log's records take their fields; frees g. */
char *oj_gen_finish_fields (yajl_gen g);
void oj_gen_key (yajl_gen g, const char *key);
void oj_gen_string (yajl_gen g, const char *s);
void oj_gen_bool (yajl_gen g, bool b);
void oj_gen_i64 (yajl_gen g, int64_t n);
void oj_gen_u64 (yajl_gen g, uint64_t n);

/* key: value pairs, skipped when the value is absent (NULL, unset). */
void oj_gen_kv_string (yajl_gen g, const char *key, const char *s);
void oj_gen_kv_bool (yajl_gen g, const char *key, bool b);
void oj_gen_kv_i64 (yajl_gen g, const char *key, int64_t n);
void oj_gen_kv_u64 (yajl_gen g, const char *key, uint64_t n);
void oj_gen_kv_opt_bool (yajl_gen g, const char *key, oci_opt_bool b);
void oj_gen_kv_opt_i64 (yajl_gen g, const char *key, oci_opt_i64 n);
void oj_gen_kv_opt_u64 (yajl_gen g, const char *key, oci_opt_u64 n);
void oj_gen_kv_opt_u32 (yajl_gen g, const char *key, oci_opt_u32 n);
void oj_gen_kv_strv (yajl_gen g, const char *key, const oci_strv *v);
void oj_gen_kv_map (yajl_gen g, const char *key, const oci_map *m);

#endif
