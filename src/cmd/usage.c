/* SPDX-License-Identifier: Apache-2.0 */
/* What --help prints, in the three forms ar_help_format names: text for
 * people, roff for the man pages make builds (man/merge.awk adds their
 * prose), tab-separated lines for the shell completion in
 * contrib/completion. One table of options feeds all three. */
#include "config.h"
#include "cmd.h"

#include <stdio.h>
#include <string.h>

void
ar_put_roff (const char *text)
{
  bool line_start = true;
  for (const char *c = text; *c; c++)
    {
      if (line_start && (*c == '.' || *c == '\''))
        fputs ("\\&", stdout);
      if (*c == '\\')
        fputs ("\\e", stdout);
      else if (*c == '-')
        fputs ("\\-", stdout);
      else
        putchar (*c);
      line_start = *c == '\n';
    }
}

/* One completion field: the format is tab-separated, one record a line. */
static void
put_field (const char *text)
{
  putchar ('\t');
  for (const char *c = text; *c; c++)
    putchar (*c == '\n' || *c == '\t' ? ' ' : *c);
}

static void
print_option_text (const ar_option *o)
{
  char left[64];
  snprintf (left, sizeof left, "%c%c%c --%s%s", o->short_name ? '-' : ' ',
            o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ',
            o->long_name, o->takes_value ? " VALUE" : "");
  printf ("  %-30s %s\n", left, o->help);
}

static void
print_option_man (const ar_option *o)
{
  printf (".TP\n");
  if (o->short_name)
    printf ("\\fB\\-%c\\fR, ", o->short_name);
  printf ("\\fB\\-\\-");
  ar_put_roff (o->long_name);
  printf ("\\fR%s\n", o->takes_value ? " \\fIVALUE\\fR" : "");
  ar_put_roff (o->help);
  putchar ('\n');
}

/* option, --long, -s or -, VALUE or -, help: no field is ever empty, so
 * that a shell's read splits them as written. */
static void
print_option_completion (const ar_option *o)
{
  printf ("option\t--%s\t", o->long_name);
  if (o->short_name)
    printf ("-%c", o->short_name);
  else
    putchar ('-');
  printf ("\t%s", o->takes_value ? "VALUE" : "-");
  put_field (o->help);
  putchar ('\n');
}

/* Every command takes it; ar_parse_options knows it without a table. */
static const ar_option help_option = { "help", 'h', false, "print this help" };

void
ar_print_options (const ar_option *opts, ar_help_format format)
{
  void (*print) (const ar_option *) = format == AR_HELP_MAN ? print_option_man
                                      : format == AR_HELP_COMPLETION
                                          ? print_option_completion
                                          : print_option_text;
  for (int i = 0; opts[i].long_name; i++)
    print (&opts[i]);
  print (&help_option);
}

void
ar_print_usage (const ar_command_doc *doc, const ar_option *opts,
                ar_help_format format)
{
  if (format == AR_HELP_MAN)
    {
      printf (
          ".SH SYNOPSIS\n\\fBagentrun\\fR [\\fIGLOBAL OPTIONS\\fR] \\fB%s\\fR ",
          doc->verb);
      ar_put_roff (doc->usage);
      printf ("\n.SH DESCRIPTION\n");
      ar_put_roff (doc->what);
      putchar ('\n');
    }
  else if (format == AR_HELP_COMPLETION)
    {
      printf ("usage");
      put_field (doc->usage);
      putchar ('\n');
    }
  else
    printf ("Usage: agentrun %s %s\n\n%s\n\nOptions:\n", doc->verb, doc->usage,
            doc->what);
  if (format == AR_HELP_MAN)
    printf (".SH OPTIONS\n");
  ar_print_options (opts, format);
}
