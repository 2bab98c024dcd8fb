"""A run's settings in layers: defaults, the plan's taskhand.toml, TASKHAND_* variables, flags;
and a bad value in any layer is one line naming where it is and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.config import (
    Caps,
    FlagError,
    Flags,
    PromptCaps,
    RunConfig,
    SettingsError,
    Setup,
    build,
    read_file,
    variable,
)
from taskhand.unit import Limits

FILE = (
    '[run]\nagent = "openai"\nmodel = "qwen"\n'
    '[roles.evaluator]\nagent = "claude"\nmodel = "opus"\n'
    "[review]\nlenses = ['correctness', 'security']\nbounces = 2\n"
)


def plan_with(tmp_path: Path, text: str | None) -> Path:
    if text is not None:
        (tmp_path / "taskhand.toml").write_text(text)
    return tmp_path


def test_defaults_without_a_file_variables_or_flags(tmp_path: Path) -> None:
    assert build(plan_with(tmp_path, None), env={}) == RunConfig()
    assert RunConfig().caps == Caps(max_attempts=3, bounces=3, unit_seconds=1800.0)


def test_the_file_overrides_the_defaults(tmp_path: Path) -> None:
    config = build(plan_with(tmp_path, FILE + "[prompts]\nplan_bytes = 3000\n"), env={})
    assert (config.agent, config.model) == ("openai", "qwen")
    assert (config.evaluator, config.evaluator_model) == ("claude", "opus")
    assert (config.lenses, config.caps.bounces) == (["correctness", "security"], 2)
    assert config.prompt_caps == PromptCaps(plan_bytes=3000)
    assert config.caps.max_attempts == 3  # what the file does not say keeps its default


def test_variables_override_the_file(tmp_path: Path) -> None:
    plan = plan_with(tmp_path, FILE)
    env = {
        "TASKHAND_MODEL": "llama",
        "TASKHAND_REVIEW": "tests",
        "TASKHAND_BOUNCES": "5",
        "TASKHAND_EVALUATOR_MODEL": "sonnet",
        "TASKHAND_MAX_ATTEMPTS": "7",
        "TASKHAND_UNIT_TIMEOUT": "60",
        "TASKHAND_RUN_DOLLARS": "0.5",
        "TASKHAND_SANDBOX": "none",
        "TASKHAND_SCRIPT": "replay.toml",
    }
    config = build(plan, env=env)
    assert (config.agent, config.model) == ("openai", "llama")
    assert (config.evaluator, config.evaluator_model) == ("claude", "sonnet")
    assert (config.lenses, config.caps.bounces, config.caps.max_attempts) == (["tests"], 5, 7)
    assert (config.caps.unit_seconds, config.caps.run_dollars) == (60.0, 0.5)
    assert config.sandbox == "none"
    assert config.script == str(Path("replay.toml").resolve())


def test_flags_override_the_variables(tmp_path: Path) -> None:
    plan = plan_with(tmp_path, FILE)
    env = {"TASKHAND_AGENT": "gemini", "TASKHAND_BOUNCES": "5", "TASKHAND_REVIEW": "tests"}
    flags = Flags(agent="codex", bounces=4, lenses="general,documentation", evaluator="replay")
    config = build(plan, flags, env=env)
    assert (config.agent, config.model) == ("codex", None)
    assert (config.evaluator, config.evaluator_model) == ("replay", "opus")
    assert (config.lenses, config.caps.bounces) == (["general", "documentation"], 4)
    assert build(plan, Flags(lenses=["tests"]), env={}).lenses == ["tests"]  # a list will do


def test_an_empty_value_in_any_layer_is_no_value(tmp_path: Path) -> None:
    plan = plan_with(tmp_path, FILE)
    config = build(plan, Flags(agent="", lenses=""), env={"TASKHAND_AGENT": ""})
    assert (config.agent, config.lenses) == ("openai", ["correctness", "security"])
    empty = plan_with(tmp_path, '[run]\nagent = ""\n')
    assert build(empty, env={"TASKHAND_AGENT": ""}).agent == "replay"


def test_the_files_model_belongs_to_the_files_agent(tmp_path: Path) -> None:
    plan = plan_with(tmp_path, FILE)
    assert build(plan, env={"TASKHAND_AGENT": "gemini"}).model is None
    assert build(plan, Flags(agent="codex", model="gpt-5"), env={}).model == "gpt-5"
    assert build(plan, Flags(agent="openai"), env={}).model == "qwen"  # the same agent keeps it
    # A file that names a model alone gives it to whichever agent runs.
    alone = plan_with(tmp_path, '[run]\nmodel = "qwen"\n')
    assert build(alone, Flags(agent="codex"), env={}).model == "qwen"


def test_a_reviewer_role_without_an_agent_takes_the_runs(tmp_path: Path) -> None:
    plan = plan_with(tmp_path, '[roles.evaluator]\nmodel = "opus"\n')
    config = build(plan, Flags(agent="codex"), env={})
    assert (config.evaluator, config.evaluator_model, config.evaluator_agent) == (
        "codex",
        "opus",
        "codex",
    )
    assert build(plan_with(tmp_path, ""), Flags(agent="codex"), env={}).evaluator is None


def test_every_flag_has_its_variable() -> None:
    assert variable("max_attempts") == "TASKHAND_MAX_ATTEMPTS"
    assert variable("lenses") == "TASKHAND_REVIEW"
    assert variable("unit_seconds") == "TASKHAND_UNIT_TIMEOUT"
    assert variable("base_ref") == "TASKHAND_BASE"
    assert variable("snapshot") == "TASKHAND_SNAPSHOT"


def test_snapshot_in_every_layer(tmp_path: Path) -> None:
    plan = plan_with(tmp_path, "[run]\nsnapshot = true\n")
    assert build(plan, env={}).snapshot is True
    assert build(plan, env={"TASKHAND_SNAPSHOT": "0"}).snapshot is False
    assert build(plan, Flags(snapshot=True), env={"TASKHAND_SNAPSHOT": "no"}).snapshot is True
    assert build(plan_with(tmp_path, ""), env={"TASKHAND_SNAPSHOT": "yes"}).snapshot is True
    assert build(plan_with(tmp_path, ""), env={}).snapshot is False
    with pytest.raises(SettingsError, match="TASKHAND_SNAPSHOT = 'maybe' is not true or false"):
        build(plan, env={"TASKHAND_SNAPSHOT": "maybe"})


def test_max_requeues_in_every_layer(tmp_path: Path) -> None:
    """The requeue cap (a task sent back by another task's landing) is a count of its own,
    beside jobs in the file, with its variable and flag."""
    assert build(plan_with(tmp_path, None), env={}).caps.max_requeues == 5
    plan = plan_with(tmp_path, "jobs = 4\nmax_requeues = 2\n")
    assert build(plan, env={}).caps.max_requeues == 2
    assert build(plan, env={"TASKHAND_MAX_REQUEUES": "3"}).caps.max_requeues == 3
    assert build(plan, Flags(max_requeues=7), env={}).caps.max_requeues == 7
    with pytest.raises(SettingsError, match=r"taskhand\.toml:2: max_requeues = 0 .*\(fix: "):
        build(plan_with(tmp_path, "jobs = 2\nmax_requeues = 0\n"), env={})
    with pytest.raises(FlagError) as caught:
        build(plan_with(tmp_path, ""), Flags(max_requeues=0), env={})
    assert caught.value.where == "--max-requeues"


def test_setup_is_read_from_the_file(tmp_path: Path) -> None:
    text = '[setup]\ncopy = [".env", "config/local.json"]\nrun = "npm ci"\ntimeout_seconds = 90\n'
    setup = build(plan_with(tmp_path, text), env={}).setup
    assert setup == Setup([".env", "config/local.json"], "npm ci", 90)
    assert build(plan_with(tmp_path, ""), env={}).setup == Setup()


def test_limits_are_read_from_the_file(tmp_path: Path) -> None:
    text = '[limits]\nprocesses = 100\nmemory = "1.5 GiB"\ndisk = 0\ntmp = "256MiB"\n'
    limits = build(plan_with(tmp_path, text), env={}).limits
    assert limits == Limits(processes=100, memory=3 << 29, disk=0, tmp=256 << 20)
    assert build(plan_with(tmp_path, ""), env={}).limits == Limits()


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("[run\n", "taskhand.toml: ", "(fix: correct the TOML)"),
        ("[workers]\nn = 2\n", "taskhand.toml:1: ", "unknown section [workers]"),
        ("[run]\nagents = 'x'\n", "taskhand.toml:2: ", "[run] agents"),
        ("[roles.evaluator]\nagent = 3\n", "taskhand.toml:1: ", "[roles.evaluator]"),
        ("[review]\nlenses = ['style']\n", "taskhand.toml:2: ", "[review] lenses"),
        ("[review]\nlenses = []\n", "taskhand.toml:2: ", "[review] lenses"),
        ("[review]\nlenses = ['tests', 'tests']\n", "taskhand.toml:2: ", "[review] lenses"),
        ("[review]\nbounces = 0\n", "taskhand.toml:2: ", "[review] bounces = 0"),
        ("[review]\n\nbounces = true\n", "taskhand.toml:3: ", "[review] bounces"),
        ("[review]\nrounds = 2\n", "taskhand.toml:2: ", "[review] rounds"),
        ("[prompts]\nplan_bytes = -1\n", "taskhand.toml:2: ", "[prompts] plan_bytes"),
        ("[prompts]\nplan = 100\n", "taskhand.toml:2: ", "[prompts] plan"),
        ("[env]\npass = 'DATABASE_URL'\n", "taskhand.toml:2: ", "[env] pass = 'DATABASE_URL'"),
        ("[env]\npass = [1]\n", "taskhand.toml:2: ", "[env] pass = [1]"),
        ("[env]\npass = ['DATABASE_URL=x']\n", "", "'DATABASE_URL=x', not a variable name"),
        ("[env]\npass = ['$HOME']\n", "", "'$HOME', not a variable name"),
        ("[env]\npass = ['A', 'A']\n", "", "names a variable twice"),
        ("[env]\nkeep = ['A']\n", "taskhand.toml:2: ", "[env] keep"),
        ("[run]\nsnapshot = 'yes'\n", "taskhand.toml:2: ", "[run] snapshot = 'yes'"),
        ("[setup]\ncopy = '.env'\n", "taskhand.toml:2: ", "[setup] copy = '.env'"),
        ("[setup]\n\ncopy = ['../x']\n", "taskhand.toml:3: ", "'../x', which leaves"),
        ("[setup]\ncopy = ['/etc/passwd']\n", "taskhand.toml:2: ", "not a relative path"),
        ("[setup]\ncopy = ['.git/config']\n", "taskhand.toml:2: ", "which is inside .git"),
        ("[setup]\ncopy = ['./.env']\n", "taskhand.toml:2: ", "not written plainly"),
        ("[setup]\ncopy = [3]\n", "taskhand.toml:2: ", "copy names 3, which is not a path"),
        ("[setup]\ncopy = ['.env', '.env']\n", "taskhand.toml:2: ", "names a file twice"),
        ("[setup]\nrun = ['npm', 'ci']\n", "taskhand.toml:2: ", "[setup] run = ['npm'"),
        ("[setup]\ntimeout_seconds = 0\n", "taskhand.toml:2: ", "timeout_seconds = 0"),
        ("[setup]\nscript = 'x'\n", "taskhand.toml:2: ", "[setup] script"),
        ("[limits]\ncpus = 2\n", "taskhand.toml:2: ", "[limits] cpus"),
        ("[limits]\nprocesses = -1\n", "taskhand.toml:2: ", "[limits] processes = -1"),
        ("[limits]\nmemory = 'lots'\n", "taskhand.toml:2: ", "[limits] memory = 'lots'"),
        ("[limits]\ndisk = true\n", "taskhand.toml:2: ", "[limits] disk = True"),
    ],
)
def test_a_bad_file_says_where_and_how_to_fix(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    with pytest.raises(SettingsError, match=r"taskhand\.toml(:\d+)?: .*\(fix: ") as caught:
        build(plan_with(tmp_path, text), env={})
    shown = str(caught.value)
    assert where in shown and message in shown and "\n" not in shown


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("TASKHAND_BOUNCES", "0", "TASKHAND_BOUNCES = '0' is below 1 (fix: a whole number >= 1"),
        ("TASKHAND_MAX_ATTEMPTS", "1.5", "'1.5' is not a whole number (fix: a whole number"),
        ("TASKHAND_REVIEW", "tests,style", "'tests,style' names 'style', not a lens (fix: "),
        ("TASKHAND_REVIEW", "tests,tests", "names a lens twice (fix: distinct names from "),
        ("TASKHAND_SANDBOX", "maybe", "'maybe' is not a sandbox taskhand knows (fix: auto, "),
        ("TASKHAND_UNIT_TIMEOUT", "soon", "'soon' is not a number (fix: a number of seconds"),
        ("TASKHAND_RUN_DOLLARS", "-1", "'-1' is below 0 (fix: a number >= 0, or unset it)"),
    ],
)
def test_a_bad_variable_names_itself_and_the_fix(
    tmp_path: Path, name: str, value: str, says: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        build(plan_with(tmp_path, None), env={name: value})
    assert not isinstance(caught.value, FlagError)
    assert says in str(caught.value) and str(caught.value).startswith(name)


@pytest.mark.parametrize(
    ("flags", "flag", "says"),
    [
        (Flags(max_attempts=0), "--max-attempts", "0 is below 1"),
        (Flags(task_tokens=True), "--task-tokens", "True is not a whole number"),
        (Flags(lenses="correctness,style"), "--review", "names 'style', not a lens"),
        (Flags(lenses=","), "--review", "names no lens"),
        (Flags(sandbox="docker"), "--sandbox", "'docker' is not a sandbox taskhand knows"),
        (Flags(unit_seconds=0.5), "--unit-timeout", "0.5 is below 1"),
        (Flags(run_seconds=float("nan")), "--run-timeout", "nan is not a number"),
        (Flags(task_dollars=-0.01), "--task-dollars", "-0.01 is below 0"),
    ],
)
def test_a_bad_flag_names_itself_and_the_fix(
    tmp_path: Path, flags: Flags, flag: str, says: str
) -> None:
    with pytest.raises(FlagError) as caught:
        build(plan_with(tmp_path, None), flags, env={})
    assert caught.value.where == flag and says in caught.value.what and caught.value.fix


def test_a_bad_file_is_reported_before_the_layers_above_it(tmp_path: Path) -> None:
    plan = plan_with(tmp_path, "[review]\nbounces = 0\n")
    with pytest.raises(SettingsError, match=r"\[review\] bounces = 0"):
        build(plan, Flags(bounces=2), env={"TASKHAND_BOUNCES": "2"})


def test_read_file_gives_the_checked_tables(tmp_path: Path) -> None:
    assert read_file(plan_with(tmp_path, None)) == {}
    plan = plan_with(tmp_path, '[env]\npass = ["DATABASE_URL", "PGHOST", "_X1"]\n')
    assert read_file(plan) == {"env": {"pass": ["DATABASE_URL", "PGHOST", "_X1"]}}
    assert build(plan, env={}).env_pass == ["DATABASE_URL", "PGHOST", "_X1"]


def test_a_config_survives_its_record() -> None:
    config = RunConfig(
        agent="codex",
        caps=Caps(bounces=5),
        prompt_caps=PromptCaps(plan_bytes=9),
        snapshot=True,
        setup=Setup([".env"], "make", 5.0),
    )
    assert RunConfig.from_json(config.as_json()) == config
    assert RunConfig.from_json({"agent": "replay"}) == RunConfig()  # an older run's record
