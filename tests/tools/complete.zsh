# SPDX-License-Identifier: Apache-2.0
# zsh -f complete.zsh DIR LINE: the matches zsh's completion system offers
# at the end of LINE, with the completion functions of DIR first in fpath,
# one a line. An interactive zsh on a pty (zpty) gets LINE and a key bound
# to complete-word followed by a marker, so that this script reads until
# the completion is over; a compadd wrapper prints each match it is given.
zmodload zsh/zpty
zpty shell zsh -f -i
zpty -w shell "PS1=''; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w shell 'compadd () { local -a hits; builtin compadd -O hits "$@"; (( $#hits )) && print -r -- "<match>${(j:</match><match>:)hits}</match>" >/dev/tty; builtin compadd "$@"; }'
# The markers are split in what is typed so that only their output matches.
zpty -w shell 'complete_then_mark () { zle complete-word; print -r -- "<comp""leted>" >/dev/tty; }; zle -N complete_then_mark; bindkey "^X^T" complete_then_mark'
zpty -w shell 'print "<rea""dy>"'
while zpty -r shell line; do [[ $line == *'<ready>'* ]] && break; done
zpty -n -w shell "$2"$'\C-x\C-t'
out=
while zpty -r shell line; do
	out+=${line%%'<completed>'*}
	[[ $line == *'<completed>'* ]] && break
done
zpty -d shell
for match in ${(s:<match>:)out}; do
	[[ $match == *'</match>'* ]] && print -r -- ${match%%</match>*}
done | sort -u
