# SPDX-License-Identifier: Apache-2.0
# bash --norc complete.bash SCRIPT LINE: what SCRIPT's bash completion
# offers at the end of LINE, one candidate a line, as bash-completion runs
# it (bash-completion's own functions loaded first).
source /usr/share/bash-completion/bash_completion
source "$1"
line=$2
read -ra COMP_WORDS <<<"$line"
[[ $line == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$line
COMP_POINT=${#line}
complete_fn=$(complete -p "${COMP_WORDS[0]##*/}" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
"$complete_fn" 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"
