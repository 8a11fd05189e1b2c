//! `convoy completion SHELL`: clap's completion script, and for bash a wrapper that completes the
//! deployment id of `convoy deploy info|status|pause|resume|abort|rollback|undo|pulse|watch ID` by
//! asking the cluster (`convoy deploy list`, with the CONVOY_* settings of the shell).

/// The bash function that completes deployment ids, falling back to clap's `_convoy`.
const BASH_IDS: &str = r#"
# Deployment ids after `convoy deploy <verb>`, asked of the cluster in CONVOY_SERVER.
_convoy_deployment_ids() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    if [[ ${COMP_CWORD} -eq 3 && "${COMP_WORDS[1]}" == deploy && "$cur" != -* ]]; then
        case "${COMP_WORDS[2]}" in
            info|status|pause|resume|abort|rollback|undo|pulse|watch)
                local ids
                ids=$(convoy deploy list -o json 2>/dev/null | sed -n 's/^ *"id": *"\(d-[0-9]*\)".*/\1/p')
                COMPREPLY=( $(compgen -W "${ids}" -- "${cur}") )
                return 0
                ;;
        esac
    fi
    _convoy "$@"
}
complete -F _convoy_deployment_ids -o bashdefault -o default convoy
"#;

/// The completion script for `shell` of the command `cmd`.
pub fn script(shell: clap_complete::Shell, cmd: &mut clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, cmd, "convoy", &mut out);
    if shell == clap_complete::Shell::Bash {
        out.extend_from_slice(BASH_IDS.as_bytes());
    }
    out
}
