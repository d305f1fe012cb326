# SPDX-License-Identifier: Apache-2.0
# awk -f merge.awk PROSE.roff - <GENERATED: one man page from two parts.
# GENERATED is what `agentrun help --man` prints from the tables --help
# uses (NAME, SYNOPSIS, DESCRIPTION, then OPTIONS or COMMANDS). PROSE is
# written by hand: its lines before its first .SH continue DESCRIPTION;
# its sections from the first .SH on (EXIT STATUS, SEE ALSO...) end the
# page.
FNR == NR {
	if ($0 ~ /^\.SH /)
		in_sections = 1
	if (in_sections)
		sections = sections $0 "\n"
	else
		description = description $0 "\n"
	next
}
/^\.SH / && after_description && !placed {
	printf "%s", description
	placed = 1
}
/^\.SH DESCRIPTION/ { after_description = 1 }
{ print }
END {
	if (!placed)
		printf "%s", description
	printf "%s", sections
}
