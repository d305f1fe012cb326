/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "json.h"
#include "../src/util/cleanup.h"
#include "../src/util/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

/* ------------------------------------------------------------------ */
/* Building the tree from yajl events.                                 */

typedef struct
{
  oj_value root;
  bool have_root;
  oj_value
      *open[OCI_MAX_DEPTH]; /* containers not yet closed, outermost first */
  size_t depth;
  size_t n_values;
  char *key; /* the key whose value comes next, inside an object */
  size_t key_len;
  char *stop_reason; /* why a callback cancelled the parse */
} oj_builder;

static char *
memdup_nul (const void *data, size_t len)
{
  char *s = xmalloc (len + 1);
  memcpy (s, data, len);
  s[len] = '\0';
  return s;
}

/* The path of the innermost open container, for limit errors. */
static void
builder_path (const oj_builder *b, oj_path *p)
{
  oj_path_pop (p, 0);
  for (size_t i = 0; i + 1 < b->depth; i++)
    {
      const oj_value *parent = b->open[i];
      if (parent->type == OJ_ARRAY)
        oj_path_push_index (p, parent->len - 1);
      else
        {
          const oj_member *m = &parent->members[parent->len - 1];
          oj_path_push_key (p, m->key, m->key_len);
        }
    }
}

/* Record why the parse stops, naming the innermost open container. */
static void *
builder_stop (oj_builder *b, const char *what, unsigned limit)
{
  oj_path p;
  builder_path (b, &p);
  cleanup_free char *msg = xasprintf (what, limit);
  b->stop_reason
      = p.len ? xasprintf ("%s: %s", p.buf, msg) : steal_pointer (&msg);
  return NULL;
}

static void *
grow (void *items, size_t *cap, size_t len, size_t elem_size)
{
  if (len < *cap)
    return items;
  *cap = *cap ? *cap * 2 : 4;
  return xrealloc (items, *cap * elem_size);
}

/* Append a value of `type` to the innermost open container (or make it
 * the root) and return it, or NULL when a limit is hit. */
static oj_value *
builder_add (oj_builder *b, oj_type type)
{
  if (++b->n_values > OJ_MAX_VALUES)
    return builder_stop (b, "document has more than %u values", OJ_MAX_VALUES);
  if (b->depth == 0)
    {
      b->have_root = true;
      b->root.type = type;
      return &b->root;
    }

  oj_value *parent = b->open[b->depth - 1];
  if (parent->len >= OCI_MAX_ARRAY)
    return builder_stop (b,
                         parent->type == OJ_ARRAY
                             ? "array has more than %u elements"
                             : "object has more than %u members",
                         OCI_MAX_ARRAY);

  oj_value *v;
  if (parent->type == OJ_ARRAY)
    {
      parent->items = grow (parent->items, &parent->cap, parent->len,
                            sizeof *parent->items);
      v = &parent->items[parent->len++];
    }
  else
    {
      parent->members = grow (parent->members, &parent->cap, parent->len,
                              sizeof *parent->members);
      oj_member *m = &parent->members[parent->len++];
      m->key = steal_pointer (&b->key);
      m->key_len = b->key_len;
      v = &m->value;
    }
  memset (v, 0, sizeof *v);
  v->type = type;
  return v;
}

static int
on_null (void *ctx)
{
  return builder_add (ctx, OJ_NULL) != NULL;
}

static int
on_boolean (void *ctx, int value)
{
  oj_value *v = builder_add (ctx, OJ_BOOL);
  if (v)
    v->boolean = value;
  return v != NULL;
}

static int
on_text (void *ctx, oj_type type, const unsigned char *s, size_t len)
{
  oj_value *v = builder_add (ctx, type);
  if (v)
    {
      v->text = memdup_nul (s, len);
      v->len = len;
    }
  return v != NULL;
}

static int
on_number (void *ctx, const char *s, size_t len)
{
  return on_text (ctx, OJ_NUMBER, (const unsigned char *) s, len);
}

static int
on_string (void *ctx, const unsigned char *s, size_t len)
{
  return on_text (ctx, OJ_STRING, s, len);
}

static int
on_open (void *ctx, oj_type type)
{
  oj_builder *b = ctx;
  if (b->depth == OCI_MAX_DEPTH)
    {
      /* A path 64 levels deep says less than the byte offset. */
      b->stop_reason
          = xasprintf ("JSON nested deeper than %d levels", OCI_MAX_DEPTH);
      return 0;
    }
  oj_value *v = builder_add (b, type);
  if (v)
    b->open[b->depth++] = v;
  return v != NULL;
}

static int
on_start_map (void *ctx)
{
  return on_open (ctx, OJ_OBJECT);
}

static int
on_start_array (void *ctx)
{
  return on_open (ctx, OJ_ARRAY);
}

static int
on_map_key (void *ctx, const unsigned char *key, size_t len)
{
  oj_builder *b = ctx;
  free (b->key);
  b->key = memdup_nul (key, len);
  b->key_len = len;
  return 1;
}

static int
compare_members (const void *a, const void *b)
{
  const oj_member *x = *(const oj_member *const *) a;
  const oj_member *y = *(const oj_member *const *) b;
  if (x->key_len != y->key_len)
    return x->key_len < y->key_len ? -1 : 1;
  return memcmp (x->key, y->key, x->key_len);
}

/* A key that appears twice in one object, or NULL. Sorting keeps a
 * hostile object of OCI_MAX_ARRAY members from costing n^2 compares. */
static const oj_member *
find_duplicate_key (const oj_value *obj)
{
  if (obj->len < 2)
    return NULL;
  cleanup_free const oj_member **sorted = xcalloc (obj->len, sizeof *sorted);
  for (size_t i = 0; i < obj->len; i++)
    sorted[i] = &obj->members[i];
  qsort (sorted, obj->len, sizeof *sorted, compare_members);
  for (size_t i = 1; i < obj->len; i++)
    if (compare_members (&sorted[i - 1], &sorted[i]) == 0)
      return sorted[i];
  return NULL;
}

/* Every object of every document refuses a repeated key: with "last one
 * wins", two readers of one file (a policy checker, this runtime) could
 * each see a different config. */
static int
on_close (void *ctx)
{
  oj_builder *b = ctx;
  const oj_value *closing = b->open[b->depth - 1];
  const oj_member *dup
      = closing->type == OJ_OBJECT ? find_duplicate_key (closing) : NULL;
  if (dup)
    {
      oj_path p;
      builder_path (b, &p);
      oj_path_push_key (&p, dup->key, dup->key_len);
      b->stop_reason = xasprintf ("%s: duplicate key", p.buf);
      return 0;
    }
  b->depth--;
  return 1;
}

static const yajl_callbacks builder_callbacks = {
  .yajl_null = on_null,
  .yajl_boolean = on_boolean,
  .yajl_number = on_number,
  .yajl_string = on_string,
  .yajl_start_map = on_start_map,
  .yajl_map_key = on_map_key,
  .yajl_end_map = on_close,
  .yajl_start_array = on_start_array,
  .yajl_end_array = on_close,
};

/* yajl's messages end in a newline and may hold more; errors here are
 * one line. */
static void
collapse_to_one_line (char *s)
{
  for (char *p = s; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t')
      *p = ' ';
  size_t n = strlen (s);
  while (n > 0 && s[n - 1] == ' ')
    s[--n] = '\0';
}

static int
syntax_error (yajl_handle h, const char *data, size_t len, bool at_end,
              const char *file, ar_error_t **err)
{
  unsigned char *raw = yajl_get_error (h, 0, (const unsigned char *) data, len);
  cleanup_free char *msg = xstrdup ((const char *) raw);
  yajl_free_error (h, raw);
  collapse_to_one_line (msg);
  if (at_end)
    return ar_error_set (err, 0, "%s: %s", file, msg);
  return ar_error_set (err, 0, "%s: %s (at byte %zu)", file, msg,
                       yajl_get_bytes_consumed (h));
}

int
oj_parse (const char *data, size_t len, const char *file, oj_value *out,
          ar_error_t **err)
{
  oj_builder b = { 0 };
  yajl_handle h = yajl_alloc (&builder_callbacks, NULL, &b);
  if (h == NULL)
    abort ();

  int ret = 0;
  yajl_status st = yajl_parse (h, (const unsigned char *) data, len);
  bool at_end = false;
  if (st == yajl_status_ok)
    {
      at_end = true;
      st = yajl_complete_parse (h);
    }

  if (st == yajl_status_client_canceled)
    ret = ar_error_set (err, 0, "%s: %s (at byte %zu)", file, b.stop_reason,
                        yajl_get_bytes_consumed (h));
  else if (st != yajl_status_ok)
    ret = syntax_error (h, data, len, at_end, file, err);
  else if (!b.have_root)
    ret = ar_error_set (err, 0, "%s: empty document", file);

  yajl_free (h);
  free (b.key);
  free (b.stop_reason);
  if (ret < 0)
    {
      oj_value_clear (&b.root);
      return ret;
    }
  *out = b.root;
  return 0;
}

/* Recursion is bounded by OCI_MAX_DEPTH. */
void
oj_value_clear (oj_value *v)
{
  switch (v->type)
    {
    case OJ_STRING:
    case OJ_NUMBER:
      free (v->text);
      break;
    case OJ_ARRAY:
      for (size_t i = 0; i < v->len; i++)
        oj_value_clear (&v->items[i]);
      free (v->items);
      break;
    case OJ_OBJECT:
      for (size_t i = 0; i < v->len; i++)
        {
          free (v->members[i].key);
          oj_value_clear (&v->members[i].value);
        }
      free (v->members);
      break;
    case OJ_NULL:
    case OJ_BOOL:
      break;
    }
  memset (v, 0, sizeof *v);
}

const oj_value *
oj_get (const oj_value *obj, const char *key)
{
  if (obj == NULL || obj->type != OJ_OBJECT)
    return NULL;
  size_t key_len = strlen (key);
  for (size_t i = obj->len; i-- > 0;)
    {
      const oj_member *m = &obj->members[i];
      if (m->key_len == key_len && memcmp (m->key, key, key_len) == 0)
        return m->value.type == OJ_NULL ? NULL : &m->value;
    }
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Paths and error messages.                                           */

/* Append, keeping room for a "..." that marks a cut. */
static void
path_append (oj_path *p, const char *s, size_t n)
{
  const size_t limit = OJ_PATH_MAX - 1;
  if (p->len + n <= limit - 3)
    {
      memcpy (p->buf + p->len, s, n);
      p->len += n;
    }
  else if (p->len < limit - 3)
    {
      memcpy (p->buf + p->len, "...", 3);
      p->len += 3;
    }
  p->buf[p->len] = '\0';
}

/* Quote `s` as a JSON-ish string for messages: escapes keep it on one
 * line, and long strings are cut (on a UTF-8 boundary) with "...". */
static char *
quote (const char *s, size_t len, size_t max)
{
  bool cut = len > max;
  if (cut)
    {
      len = max;
      while (len > 0 && ((unsigned char) s[len] & 0xC0) == 0x80)
        len--;
    }
  char *out = xmalloc (len * 4 + 8);
  char *o = out;
  *o++ = '"';
  for (size_t i = 0; i < len; i++)
    {
      unsigned char ch = (unsigned char) s[i];
      if (ch == '"' || ch == '\\')
        {
          *o++ = '\\';
          *o++ = (char) ch;
        }
      else if (ch < 0x20 || ch == 0x7f)
        o += sprintf (o, "\\x%02x", ch);
      else
        *o++ = (char) ch;
    }
  *o++ = '"';
  if (cut)
    o = stpcpy (o, "...");
  *o = '\0';
  return out;
}

char *
oj_json_string (const char *s, size_t len, size_t max)
{
  const unsigned char *u = (const unsigned char *) s;
  /* Each input byte takes at most 6 output bytes ("\u00XX"; U+FFFD is 3). */
  size_t cap = (len < max ? len : max) * 6 + 8;
  char *out = xmalloc (cap);
  char *o = out;
  *o++ = '"';
  size_t i = 0;
  while (i < len)
    {
      size_t seq = ar_utf8_sequence (u + i, len - i);
      if (i + (seq ? seq : 1) > max)
        {
          o = stpcpy (o, "...");
          break;
        }
      if (seq > 1)
        {
          memcpy (o, s + i, seq);
          o += seq;
        }
      else if (seq == 0)
        o = stpcpy (o, "\xEF\xBF\xBD");
      else if (u[i] == '"' || u[i] == '\\')
        {
          *o++ = '\\';
          *o++ = (char) u[i];
        }
      else if (u[i] < 0x20 || u[i] == 0x7f)
        o += sprintf (o, "\\u%04x", u[i]);
      else
        *o++ = (char) u[i];
      i += seq ? seq : 1;
    }
  *o++ = '"';
  *o = '\0';
  return out;
}

static bool
is_plain_key (const char *key, size_t len)
{
  if (len == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    {
      char ch = key[i];
      if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
            || (ch >= '0' && ch <= '9') || ch == '_'))
        return false;
    }
  return true;
}

char *
oj_quote (const char *s, size_t len)
{
  return quote (s, len, 64);
}

size_t
oj_path_push_key (oj_path *p, const char *key, size_t key_len)
{
  size_t mark = p->len;
  if (is_plain_key (key, key_len))
    {
      path_append (p, ".", 1);
      path_append (p, key, key_len);
      return mark;
    }
  cleanup_free char *q = quote (key, key_len, 64);
  path_append (p, "[", 1);
  path_append (p, q, strlen (q));
  path_append (p, "]", 1);
  return mark;
}

size_t
oj_path_push_index (oj_path *p, size_t index)
{
  size_t mark = p->len;
  char buf[32];
  int n = snprintf (buf, sizeof buf, "[%zu]", index);
  path_append (p, buf, (size_t) n);
  return mark;
}

int
oj_fail (oj_ctx *c, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *msg = xvasprintf (fmt, ap);
  va_end (ap);
  if (c->path.len == 0)
    return ar_error_set (c->err, 0, "%s: %s", c->file, msg);
  return ar_error_set (c->err, 0, "%s: %s: %s", c->file, c->path.buf, msg);
}

char *
oj_describe (const oj_value *v)
{
  switch (v->type)
    {
    case OJ_NULL:
      return xstrdup ("null");
    case OJ_BOOL:
      return xstrdup (v->boolean ? "boolean true" : "boolean false");
    case OJ_NUMBER:
      {
        /* Numbers are plain ASCII; only their length needs taming. */
        if (v->len <= 32)
          return xasprintf ("number %s", v->text);
        return xasprintf ("number %.32s...", v->text);
      }
    case OJ_STRING:
      {
        cleanup_free char *q = quote (v->text, v->len, 64);
        return xasprintf ("string %s", q);
      }
    case OJ_ARRAY:
      return xstrdup ("array");
    case OJ_OBJECT:
      return xstrdup ("object");
    }
  return xstrdup ("value");
}

int
oj_fail_type (oj_ctx *c, const oj_value *v, const char *what)
{
  cleanup_free char *got = oj_describe (v);
  return oj_fail (c, "expected %s, got %s", what, got);
}

/* ------------------------------------------------------------------ */
/* Typed readers.                                                      */

int
oj_field (oj_ctx *c, const oj_value *obj, const char *key, oj_reader read,
          void *out)
{
  const oj_value *v = oj_get (obj, key);
  if (v == NULL)
    return 0;
  size_t mark = oj_path_push_key (&c->path, key, strlen (key));
  int r = read (c, v, out);
  oj_path_pop (&c->path, mark);
  return r;
}

int
oj_required (oj_ctx *c, const oj_value *obj, const char *key, oj_reader read,
             void *out)
{
  if (oj_get (obj, key) != NULL)
    return oj_field (c, obj, key, read, out);
  size_t mark = oj_path_push_key (&c->path, key, strlen (key));
  oj_fail (c, "missing required field");
  oj_path_pop (&c->path, mark);
  return -1;
}

int
oj_expect_object (oj_ctx *c, const oj_value *v)
{
  return v->type == OJ_OBJECT ? 0 : oj_fail_type (c, v, "object");
}

int
oj_read_array (oj_ctx *c, const oj_value *v, size_t elem_size, oj_reader read,
               void **items, size_t *len)
{
  if (v->type != OJ_ARRAY)
    return oj_fail_type (c, v, "array");
  *items = xcalloc (v->len, elem_size);
  *len = v->len;
  for (size_t i = 0; i < v->len; i++)
    {
      size_t mark = oj_path_push_index (&c->path, i);
      int r = read (c, &v->items[i], (char *) *items + i * elem_size);
      oj_path_pop (&c->path, mark);
      if (r < 0)
        return r;
    }
  return 0;
}

/* A string without NUL bytes (it goes into C strings, paths, argv). */
static int
plain_string (oj_ctx *c, const oj_value *v)
{
  if (v->type != OJ_STRING)
    return oj_fail_type (c, v, "string");
  if (memchr (v->text, '\0', v->len) != NULL)
    return oj_fail (c, "string contains a NUL character");
  return 0;
}

int
oj_read_string (oj_ctx *c, const oj_value *v, void *out)
{
  if (plain_string (c, v) < 0)
    return -1;
  char **s = out;
  free (*s);
  *s = xstrdup (v->text);
  return 0;
}

int
oj_read_bool (oj_ctx *c, const oj_value *v, void *out)
{
  if (v->type != OJ_BOOL)
    return oj_fail_type (c, v, "boolean");
  *(bool *) out = v->boolean;
  return 0;
}

/* JSON integers only: Go rejects 1.0 and 1e3 for integer fields too. */
static bool
is_integer_text (const oj_value *v)
{
  return v->type == OJ_NUMBER && v->len > 0
         && strspn (v->text, "-0123456789") == v->len;
}

static bool
to_i64 (const oj_value *v, int64_t *out)
{
  if (!is_integer_text (v))
    return false;
  errno = 0;
  long long n = strtoll (v->text, NULL, 10);
  if (errno != 0)
    return false;
  *out = n;
  return true;
}

static bool
to_u64 (const oj_value *v, uint64_t max, uint64_t *out)
{
  if (!is_integer_text (v) || v->text[0] == '-')
    return false;
  errno = 0;
  unsigned long long n = strtoull (v->text, NULL, 10);
  if (errno != 0 || n > max)
    return false;
  *out = n;
  return true;
}

int
oj_read_i64 (oj_ctx *c, const oj_value *v, void *out)
{
  return to_i64 (v, out) ? 0 : oj_fail_type (c, v, "int64");
}

int
oj_read_u64 (oj_ctx *c, const oj_value *v, void *out)
{
  return to_u64 (v, UINT64_MAX, out) ? 0 : oj_fail_type (c, v, "uint64");
}

int
oj_read_u32 (oj_ctx *c, const oj_value *v, void *out)
{
  uint64_t n;
  if (!to_u64 (v, UINT32_MAX, &n))
    return oj_fail_type (c, v, "uint32");
  *(uint32_t *) out = (uint32_t) n;
  return 0;
}

int
oj_read_opt_bool (oj_ctx *c, const oj_value *v, void *out)
{
  oci_opt_bool *o = out;
  if (oj_read_bool (c, v, &o->value) < 0)
    return -1;
  o->set = true;
  return 0;
}

int
oj_read_opt_i64 (oj_ctx *c, const oj_value *v, void *out)
{
  oci_opt_i64 *o = out;
  if (oj_read_i64 (c, v, &o->value) < 0)
    return -1;
  o->set = true;
  return 0;
}

int
oj_read_opt_u64 (oj_ctx *c, const oj_value *v, void *out)
{
  oci_opt_u64 *o = out;
  if (oj_read_u64 (c, v, &o->value) < 0)
    return -1;
  o->set = true;
  return 0;
}

int
oj_read_opt_u32 (oj_ctx *c, const oj_value *v, void *out)
{
  oci_opt_u32 *o = out;
  if (oj_read_u32 (c, v, &o->value) < 0)
    return -1;
  o->set = true;
  return 0;
}

int
oj_read_opt_u16 (oj_ctx *c, const oj_value *v, void *out)
{
  oci_opt_u32 *o = out;
  uint64_t n;
  if (!to_u64 (v, UINT16_MAX, &n))
    return oj_fail_type (c, v, "uint16");
  o->value = (uint32_t) n;
  o->set = true;
  return 0;
}

int
oj_read_strv (oj_ctx *c, const oj_value *v, void *out)
{
  oci_strv *sv = out;
  if (v->type != OJ_ARRAY)
    return oj_fail_type (c, v, "array");
  oj_strv_clear (sv);
  /* One spare slot keeps the list NULL-terminated at every step. */
  sv->items = xcalloc (v->len + 1, sizeof *sv->items);
  for (size_t i = 0; i < v->len; i++)
    {
      size_t mark = oj_path_push_index (&c->path, i);
      int r = oj_read_string (c, &v->items[i], &sv->items[i]);
      oj_path_pop (&c->path, mark);
      if (r < 0)
        return r;
      sv->len = i + 1;
    }
  return 0;
}

static int
read_map_member (oj_ctx *c, const oj_member *member, void *out)
{
  oci_map *m = out;
  if (memchr (member->key, '\0', member->key_len) != NULL)
    return oj_fail (c, "key contains a NUL character");
  cleanup_free char *value = NULL;
  if (oj_read_string (c, &member->value, &value) < 0)
    return -1;
  /* oj_parse already refused a repeated key. */
  oci_kv *kv = &m->items[m->len++];
  kv->key = xstrdup (member->key);
  kv->value = steal_pointer (&value);
  return 0;
}

int
oj_read_map (oj_ctx *c, const oj_value *v, void *out)
{
  oci_map *m = out;
  if (oj_expect_object (c, v) < 0)
    return -1;
  oj_map_clear (m);
  m->items = xcalloc (v->len, sizeof *m->items);
  return oj_each_member (c, v, read_map_member, m);
}

int
oj_each_member (oj_ctx *c, const oj_value *v, oj_member_reader fn, void *out)
{
  if (oj_expect_object (c, v) < 0)
    return -1;
  for (size_t i = 0; i < v->len; i++)
    {
      const oj_member *member = &v->members[i];
      size_t mark = oj_path_push_key (&c->path, member->key, member->key_len);
      int r = fn (c, member, out);
      oj_path_pop (&c->path, mark);
      if (r < 0)
        return r;
    }
  return 0;
}

void
oj_strv_clear (oci_strv *v)
{
  if (v->items)
    for (size_t i = 0; v->items[i]; i++)
      free (v->items[i]);
  free (v->items);
  v->items = NULL;
  v->len = 0;
}

void
oj_map_clear (oci_map *m)
{
  for (size_t i = 0; i < m->len; i++)
    {
      free (m->items[i].key);
      free (m->items[i].value);
    }
  free (m->items);
  m->items = NULL;
  m->len = 0;
}

/* ------------------------------------------------------------------ */
/* Emitting.                                                           */

yajl_gen
oj_gen_new (bool pretty, const char *indent)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  if (pretty)
    {
      yajl_gen_config (g, yajl_gen_beautify, 1);
      yajl_gen_config (g, yajl_gen_indent_string, indent);
    }
  return g;
}

/* yajl's beautifier prints an empty array or object over two lines;
 * fold them to "[]" and "{}" as other tools do. A raw newline between
 * the brackets proves they are structure: strings have theirs escaped. */
static void
fold_empty_containers (char *s)
{
  char *out = s;
  for (const char *p = s; *p;)
    {
      if (*p == '[' || *p == '{')
        {
          const char *q = p + 1;
          size_t ws = strspn (q, " \t\n");
          char close = *p == '[' ? ']' : '}';
          if (q[ws] == close && memchr (q, '\n', ws) != NULL)
            {
              *out++ = *p;
              *out++ = close;
              p = q + ws + 1;
              continue;
            }
        }
      *out++ = *p++;
    }
  *out = '\0';
}

char *
oj_gen_finish (yajl_gen g)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  char *out = memdup_nul (buf, len);
  yajl_gen_free (g);
  fold_empty_containers (out);
  return out;
}

char *
oj_gen_finish_fields (yajl_gen g)
{
  const unsigned char *buf;
  size_t len;
  yajl_gen_get_buf (g, &buf, &len);
  char *fields = len >= 2 ? memdup_nul (buf + 1, len - 2) : xstrdup ("");
  yajl_gen_free (g);
  return fields;
}

void
oj_gen_key (yajl_gen g, const char *key)
{
  oj_gen_string (g, key);
}

void
oj_gen_string (yajl_gen g, const char *s)
{
  yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

void
oj_gen_bool (yajl_gen g, bool b)
{
  yajl_gen_bool (g, b);
}

void
oj_gen_i64 (yajl_gen g, int64_t n)
{
  yajl_gen_integer (g, (long long) n);
}

/* yajl_gen_integer takes a signed long long; values above INT64_MAX
 * (RLIM_INFINITY) go through as text. */
void
oj_gen_u64 (yajl_gen g, uint64_t n)
{
  char buf[24];
  int len = snprintf (buf, sizeof buf, "%" PRIu64, n);
  yajl_gen_number (g, buf, (size_t) len);
}

void
oj_gen_kv_string (yajl_gen g, const char *key, const char *s)
{
  if (s == NULL)
    return;
  oj_gen_key (g, key);
  oj_gen_string (g, s);
}

void
oj_gen_kv_bool (yajl_gen g, const char *key, bool b)
{
  oj_gen_key (g, key);
  oj_gen_bool (g, b);
}

void
oj_gen_kv_i64 (yajl_gen g, const char *key, int64_t n)
{
  oj_gen_key (g, key);
  oj_gen_i64 (g, n);
}

void
oj_gen_kv_u64 (yajl_gen g, const char *key, uint64_t n)
{
  oj_gen_key (g, key);
  oj_gen_u64 (g, n);
}

void
oj_gen_kv_opt_bool (yajl_gen g, const char *key, oci_opt_bool b)
{
  if (b.set)
    oj_gen_kv_bool (g, key, b.value);
}

void
oj_gen_kv_opt_i64 (yajl_gen g, const char *key, oci_opt_i64 n)
{
  if (n.set)
    oj_gen_kv_i64 (g, key, n.value);
}

void
oj_gen_kv_opt_u64 (yajl_gen g, const char *key, oci_opt_u64 n)
{
  if (n.set)
    oj_gen_kv_u64 (g, key, n.value);
}

void
oj_gen_kv_opt_u32 (yajl_gen g, const char *key, oci_opt_u32 n)
{
  if (n.set)
    oj_gen_kv_u64 (g, key, n.value);
}

void
oj_gen_kv_strv (yajl_gen g, const char *key, const oci_strv *v)
{
  if (v->items == NULL)
    return;
  oj_gen_key (g, key);
  yajl_gen_array_open (g);
  for (size_t i = 0; i < v->len; i++)
    oj_gen_string (g, v->items[i]);
  yajl_gen_array_close (g);
}

void
oj_gen_kv_map (yajl_gen g, const char *key, const oci_map *m)
{
  if (m->items == NULL)
    return;
  oj_gen_key (g, key);
  yajl_gen_map_open (g);
  for (size_t i = 0; i < m->len; i++)
    oj_gen_kv_string (g, m->items[i].key, m->items[i].value);
  yajl_gen_map_close (g);
}
