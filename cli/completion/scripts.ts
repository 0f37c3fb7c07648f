/**
 * The completion scripts `engine completion SHELL` prints. Each is thin: on TAB it hands the
 * words typed so far to `engine __complete` (commands/complete.ts) and shows what comes back,
 * so that a new command, flag or name completes with no change here. What a shell must still
 * do itself: bash splits words at `=` and `:` (COMP_WORDBREAKS), so its script joins them back
 * and strips what bash will not replace; zsh wants `:` escaped in `_describe`'s entries; all
 * three add file names when told (`:files`) and keep the space off when told (`:nospace`).
 */

export type Shell = "bash" | "zsh" | "fish";

const BASH = `# bash completion for engine, printed by \`engine completion bash\`.
# For this shell: source <(engine completion bash)
# For every shell: engine completion bash > /etc/bash_completion.d/engine
#   (or into /usr/share/bash-completion/completions/, or source it from ~/.bashrc).
# The candidates come from \`engine __complete\`: the engine's own commands and flags, and
# names asked of the daemon.

_engine_complete() {
  local i w gap pos=0 cur=\${COMP_WORDS[COMP_CWORD]} line directive=
  local -a words=()
  # bash splits \`--network=br\` and \`busybox:la\` at = and :; engine reads them whole, so the
  # pieces no blank separates on the line are joined again
  for ((i = 0; i <= COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    if [[ -z $w ]]; then gap=" "; else gap=\${COMP_LINE:pos}; gap=\${gap%%"$w"*}; fi
    if ((i > 1)) && [[ -z $gap ]]; then
      words[\${#words[@]}-1]+=$w
    elif ((i > 0)); then
      words+=("$w")
    fi
    pos=$((pos + \${#gap} + \${#w}))
  done
  # candidates are whole words; bash replaces only the piece after the last = or :
  local whole=\${words[\${#words[@]}-1]}
  local prefix=\${whole%"$cur"}
  COMPREPLY=()
  while IFS= read -r line; do
    case $line in
      :*) directive=\${line#:} ;;
      *) line=\${line%%$'\\t'*}; COMPREPLY+=("\${line#"$prefix"}") ;;
    esac
  done < <("\${COMP_WORDS[0]}" __complete -- "\${words[@]}" 2>/dev/null)
  [[ $directive == *nospace* ]] && compopt -o nospace 2>/dev/null
  if [[ $directive == *files* ]]; then
    if ((\${#COMPREPLY[@]} == 0)); then
      compopt -o default 2>/dev/null
    else
      while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -f -- "$cur")
    fi
  fi
  return 0
}

complete -F _engine_complete engine
`;

const zsh = (descriptions: boolean) => `#compdef engine
# zsh completion for engine, printed by \`engine completion zsh\`.
# For this shell (after compinit): source <(engine completion zsh)
# For every shell: engine completion zsh > "\${fpath[1]}/_engine", then start a new shell.
# The candidates come from \`engine __complete\`: the engine's own commands and flags, and
# names asked of the daemon.

_engine() {
  local -a lines entries options
  local line value directive
  lines=("\${(@f)$(\${words[1]} __complete -- "\${(@Q)words[2,CURRENT]}" 2>/dev/null)}")
  directive=\${lines[-1]}
  [[ $directive == :* ]] || return 1
  for line in "\${(@)lines[1,-2]}"; do
    [[ -n $line ]] || continue
    value=\${line%%$'\\t'*}
    # _describe reads "value:description": a colon in the value is escaped
    if [[ ${descriptions ? 1 : 0} == 1 && $line == *$'\\t'* ]]; then
      entries+=("\${value//:/\\\\:}:\${line#*$'\\t'}")
    else
      entries+=("\${value//:/\\\\:}")
    fi
  done
  [[ $directive == *nospace* ]] && options=(-S '')
  local ret=1
  (( \${#entries} )) && _describe -t engine-values 'engine' entries "\${options[@]}" && ret=0
  [[ $directive == *files* ]] && _files && ret=0
  return ret
}

if [[ "\${funcstack[1]}" == _engine ]]; then
  _engine "$@"
else
  compdef _engine engine
fi
`;

const fish = (descriptions: boolean) => `# fish completion for engine, printed by \`engine completion fish\`.
# For this shell: engine completion fish | source
# For every shell: engine completion fish > ~/.config/fish/completions/engine.fish
# The candidates come from \`engine __complete\`: the engine's own commands and flags, and
# names asked of the daemon.

function __engine_complete
    set -l tokens (commandline -opc)
    set -l current (commandline -ct)
    set -l out (command $tokens[1] __complete -- $tokens[2..-1] "$current" 2>/dev/null)
    or return
    set -l directive $out[-1]
    set -e out[-1]
    for line in $out
        ${descriptions ? "printf '%s\\n' $line" : "string split -f1 \\t -- $line"}
    end
    if string match -q -- '*files*' $directive
        __fish_complete_path "$current"
    end
end

complete -c engine -f -a '(__engine_complete)'
`;

export function completionScript(shell: Shell, descriptions: boolean): string {
  return shell === "bash" ? BASH : shell === "zsh" ? zsh(descriptions) : fish(descriptions);
}
