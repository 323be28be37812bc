# Shared by the E1 training launchers (scripts/e1-*/): flags, data paths and the verl command.
#
# A launcher sets its defaults (MODEL_PATH, GPUS, NODES, THINKING, SOLUTION), sources this file,
# calls `e1_parse_args "$@"`, fills the OVERRIDES array (it may use E1_OVERRIDES and DATA_DIR) and
# calls `e1_launch`. Flags:
#   --model PATH            model to train (Hugging Face id or local path)
#   --gpus N                GPUs per node (trainer.n_gpus_per_node)
#   --nodes N               nodes (trainer.nnodes)
#   --thinking-length T     E1 thinking budget in tokens (+e1.thinking_length)
#   --solution-length S     E1 solution budget in tokens (+e1.solution_length)
#   --data-dir DIR          where the parquet files are (default: $E1_DATA_DIR, else <repo>/data)
#   --dry-run               print the command instead of running it (or E1_DRY_RUN=1)
#   --check                 compose and validate the config with verl's validate_config, no GPUs needed
# Everything else is passed to verl as Hydra overrides, after the launcher's, so it wins; e.g.
# trainer.logger=[console] or e1.train_on_forced_tokens=true.

E1_REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

e1_die() {
    echo "error: $*" >&2
    exit 2
}

e1_positive_int() {
    [[ "$2" =~ ^[1-9][0-9]*$ ]] || e1_die "$1 takes a positive whole number, got '$2'"
}

e1_parse_args() {
    DATA_DIR="${E1_DATA_DIR:-$E1_REPO_ROOT/data}"
    DRY_RUN="${E1_DRY_RUN:-0}"
    CHECK=0
    EXTRA_OVERRIDES=()
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --model|--gpus|--nodes|--thinking-length|--solution-length|--data-dir)
                [[ $# -ge 2 ]] || e1_die "$1 needs a value"
                case "$1" in
                    --model) MODEL_PATH="$2" ;;
                    --gpus) e1_positive_int "$1" "$2"; GPUS="$2" ;;
                    --nodes) e1_positive_int "$1" "$2"; NODES="$2" ;;
                    --thinking-length) e1_positive_int "$1" "$2"; THINKING="$2" ;;
                    --solution-length) e1_positive_int "$1" "$2"; SOLUTION="$2" ;;
                    --data-dir) DATA_DIR="$2" ;;
                esac
                shift 2
                ;;
            --dry-run) DRY_RUN=1; shift ;;
            --check) CHECK=1; shift ;;
            -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
            --*) e1_die "unknown flag $1 (Hydra overrides have no leading dashes; see --help)" ;;
            *) EXTRA_OVERRIDES+=("$1"); shift ;;
        esac
    done
    # The response holds at most T thinking tokens, one </think> and S solution tokens.
    RESPONSE_LENGTH=$((THINKING + 1 + SOLUTION))
    E1_OVERRIDES=(
        actor_rollout_ref.rollout.agent.default_agent_loop=e1_agent
        "+e1.thinking_length=$THINKING"
        "+e1.solution_length=$SOLUTION"
        +e1.train_on_forced_tokens=false
        "data.max_response_length=$RESPONSE_LENGTH"
        reward.custom_reward_function.path=pkg://rllm.trainer.verl_reward
        reward.custom_reward_function.name=compute_score
        trainer.v1.trainer_mode=e1_sync
        "trainer.n_gpus_per_node=$GPUS"
        "trainer.nnodes=$NODES"
    )
}

# e1_require_data FILE...: fail with the fix when a dataset is missing (skipped in dry runs and checks).
e1_require_data() {
    [[ "$DRY_RUN" == 1 || "$CHECK" == 1 ]] && return 0
    local file
    for file in "$@"; do
        [[ -f "$file" ]] || e1_die "missing $file: build it with scripts/data/deepscaler_dataset.py or scripts/data/deepcoder_dataset.py, or pass --data-dir"
    done
}

e1_launch() {
    local entry=verl.trainer.main_ppo
    [[ "$CHECK" == 1 ]] && entry=rllm.trainer.verl_config
    local cmd=("${PYTHON:-python3}" -m "$entry" "${OVERRIDES[@]}" "${EXTRA_OVERRIDES[@]}")
    if [[ "$DRY_RUN" == 1 ]]; then
        printf '%q ' "${cmd[@]}"
        printf '\n'
        return 0
    fi
    set -x
    exec "${cmd[@]}"
}
