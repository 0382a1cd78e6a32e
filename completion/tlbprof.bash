# SPDX-License-Identifier: MIT
# bash completion for tlbprof: commands, each command's options, and the values of options that take a
# fixed set. Installed by meson as <completionsdir>/tlbprof (bash-completion loads it on first use); source
# it by hand elsewhere. Works with or without bash-completion's helpers. tests/integration/test_completion.py
# checks that every option of every --help completes here, so keep the lists below in step with src/cli.c.

_tlbprof_commands='analyze compare env events plot run'

# Long options per command; "measure" is tlbprof without a command.
_tlbprof_options_measure='--workload --pages --size --stride --strides --max-pages --cases --processes --dir
	--drop-caches --iters --precision --time-budget --realloc --warmup-frac --repeat --seed --cpu --layout
	--controls --fail-on --events-dir --json --format --output --quiet --help --version'
_tlbprof_options_analyze='--json --format --output --fail-on --quiet --help'
_tlbprof_options_compare='--threshold --fail-on --json --quiet --help'
_tlbprof_options_plot='--output --help'
_tlbprof_options_env='--json --events-dir --quiet --help'
_tlbprof_options_events='--pmu --json --events-dir --quiet --help'
_tlbprof_options_run='--control --delay --sample --cpu --events-dir --json --format --output --fail-on --quiet --help'

# Values of options that take one of a fixed set (comma lists complete item by item).
_tlbprof_workloads='chase stride tlbsize pagefault'
_tlbprof_pages='4k 2m 2m:thp 2m:hugetlb 1g'
_tlbprof_cases='anon_cold anon_refault anon_prefault file_warm file_cold'
_tlbprof_pmus='amd64_fam17h_zen2 amd64_fam19h_zen3 amd64_fam19h_zen4 icl icx skl skx spr'
_tlbprof_formats='json gbench openmetrics junit csv'

# Complete the last item of a comma-separated list in $cur from the words in $1.
_tlbprof_list()
{
	local prefix=
	[[ $cur == *,* ]] && prefix=${cur%,*},
	COMPREPLY=($(compgen -W "$1" -P "$prefix" -- "${cur##*,}"))
}

# Files and directories; $1 (optional): a glob of the file names to offer besides directories, e.g. '*.json'.
_tlbprof_files()
{
	compopt -o filenames 2>/dev/null
	local IFS=$'\n'
	if [[ -n $1 ]]; then
		COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X "!$1" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))	# directories included
	fi
}

# The value of --output: a file, a directory, -, or FORMAT=FILE pairs ("junit=ci.xml,gbench=b.json").
_tlbprof_output()
{
	local f
	if [[ $cur == *=* ]]; then
		# bash-completion kept "junit=c" as one word: complete what follows the last '=' (readline replaces only
		# that part when '=' breaks words, as it does by default).
		local head=${cur%=*}=
		cur=${cur##*=}
		_tlbprof_pair_value
		if [[ $COMP_WORDBREAKS != *=* ]]; then
			for f in "${!COMPREPLY[@]}"; do
				COMPREPLY[f]=$head${COMPREPLY[f]}
			done
		fi
		return
	fi
	_tlbprof_files
	[[ -z $cur ]] && COMPREPLY+=(-)
	for f in $_tlbprof_formats; do
		[[ $f= == "$cur"* ]] && COMPREPLY+=("$f=")
	done
	[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
}

# After "FORMAT=" in --output: a file or -, or after a comma the next "FORMAT=".
_tlbprof_pair_value()
{
	local f
	_tlbprof_files
	[[ -z $cur ]] && COMPREPLY+=(-)
	if [[ $cur == *,* ]]; then
		for f in $_tlbprof_formats; do
			[[ $f= == "${cur##*,}"* ]] && COMPREPLY+=("${cur%,*},$f=")
		done
	fi
}

_tlbprof()
{
	local cur prev words cword
	if declare -F _get_comp_words_by_ref >/dev/null; then
		# bash-completion: words rejoined across '=' and ':' ("2m:hugetlb" is one word).
		_get_comp_words_by_ref -n =: cur prev words cword
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi

	# --opt=value: complete the value (readline replaces only the text after '=').
	local opt=$prev colon_word=$cur
	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
	elif [[ $cur == = ]]; then
		cur=
	elif [[ $prev == = && $cword -ge 2 ]]; then
		opt=${words[cword - 2]}
	fi

	local cmd=measure
	if ((cword > 1)) && [[ " $_tlbprof_commands " == *" ${words[1]} "* ]]; then
		cmd=${words[1]}
	fi

	# tlbprof run [OPTIONS] [--] CMD [ARGS...]: from CMD on, complete as for CMD itself.
	if [[ $cmd == run ]]; then
		local i=2
		while ((i < cword)); do
			case ${words[i]} in
			--) ((i++)); break ;;
			--control | --delay | -D | --sample | --cpu | --events-dir | --json | --format | --output | --fail-on) ((i += 2)) ;;
			=) ((i += 2)) ;;	# "--output junit = FILE" as COMP_WORDS splits it
			-*) ((i++)) ;;
			*) break ;;
			esac
		done
		if ((i < cword)); then
			if declare -F _command_offset >/dev/null; then
				_command_offset "$i"	# bash-completion: CMD's own completion
			else
				_tlbprof_files
			fi
			return
		elif ((i == cword)) && [[ $cur != -* || ${words[i - 1]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	fi

	COMPREPLY=()
	# --output FORMAT=FILE split at '=' (no bash-completion): "junit" "=" "ci", or "a.xml,gbench" "=" "b".
	if [[ ($prev == = || $colon_word == =) && " $_tlbprof_formats " == *" ${opt##*,} "* ]]; then
		_tlbprof_pair_value
		return
	fi
	case $opt in
	--workload) COMPREPLY=($(compgen -W "$_tlbprof_workloads" -- "$cur")) ;;
	--pages) _tlbprof_list "$_tlbprof_pages" ;;
	--cases) _tlbprof_list "$_tlbprof_cases" ;;
	--format) _tlbprof_list "$_tlbprof_formats" ;;
	--layout) COMPREPLY=($(compgen -W 'colored aligned' -- "$cur")) ;;
	--controls) COMPREPLY=($(compgen -W 'auto always none' -- "$cur")) ;;
	--fail-on) COMPREPLY=($(compgen -W 'fail warn never' -- "$cur")) ;;
	--iters) COMPREPLY=($(compgen -W 'auto' -- "$cur")) ;;
	--delay | -D) COMPREPLY=($(compgen -W '-1 0' -- "$cur")) ;;
	--sample) COMPREPLY=($(compgen -W 'page-faults dtlb-misses' -- "$cur")) ;;
	--pmu) COMPREPLY=($(compgen -W "$_tlbprof_pmus" -- "$cur")) ;;
	--json) _tlbprof_files '*.json'; [[ -z $cur ]] && COMPREPLY+=(-) ;;
	--events-dir | --dir)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur")) ;;
	--output) _tlbprof_output ;;
	-o) _tlbprof_files; [[ -z $cur ]] && COMPREPLY+=(-) ;;
	--size | --stride | --strides | --max-pages | --processes | --precision | --time-budget | --realloc | \
		--warmup-frac | --repeat | --seed | --cpu | --threshold | --internal-child | --control)
		;;	# a number: nothing to offer
	*)
		if [[ $cur == -* ]]; then
			local var=_tlbprof_options_$cmd
			COMPREPLY=($(compgen -W "${!var}" -- "$cur"))
		elif ((cword == 1)); then
			COMPREPLY=($(compgen -W "$_tlbprof_commands $_tlbprof_options_measure" -- "$cur"))
		elif [[ $cmd == analyze || $cmd == compare || $cmd == plot ]]; then
			_tlbprof_files '*.json'	# the saved reports they read
		fi
		;;
	esac

	# "2m:hu" -> "2m:hugetlb": readline replaces only what follows the last ':' of COMP_WORDBREAKS.
	if [[ $colon_word == *:* && $COMP_WORDBREAKS == *:* ]]; then
		local strip=${cur%"${cur##*:}"} i
		for i in "${!COMPREPLY[@]}"; do
			COMPREPLY[i]=${COMPREPLY[i]#"$strip"}
		done
	fi
}

complete -F _tlbprof tlbprof
