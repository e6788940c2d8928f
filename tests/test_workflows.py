"""The workflows in ``.github/workflows/`` against the checkout they run.

A workflow runs only on GitHub, so a target renamed in the Makefile, a tool
moved, a cache path forgotten or a branch renamed would fail there first, and
after a merge. These tests read the workflows as data (PyYAML, no network and
no linter: ``make lint`` runs check-jsonschema and zizmor over them) and fail
here instead.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from tools import booktools

ROOT = booktools.ROOT
WORKFLOWS = ROOT / ".github" / "workflows"
WORKFLOW_FILES = sorted(WORKFLOWS.glob("*.yml"))
CI_SCRIPT = ROOT / ".ci" / "run"
SHA_PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def load(path: Path) -> dict:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in workflow:  # YAML 1.1 reads the key `on` as a boolean
        workflow["on"] = workflow.pop(True)
    return workflow


def workflow(name: str) -> dict:
    return load(WORKFLOWS / name)


def jobs(workflow_: dict):
    return workflow_.get("jobs", {}).items()


def steps(workflow_: dict):
    """``(job name, job, step)`` for every step of a workflow."""
    for name, job in jobs(workflow_):
        for step in job.get("steps", []):
            yield name, job, step


def all_steps():
    for path in WORKFLOW_FILES:
        for name, job, step in steps(load(path)):
            yield f"{path.name}: {name}", job, step


def scripts():
    """``(where, shell script)``: every ``run:`` of every workflow, and ``.ci/run``, which CI runs."""
    yield ".ci/run", CI_SCRIPT.read_text(encoding="utf-8")
    for where, _, step in all_steps():
        if "run" in step:
            yield f"{where}: {step.get('name', step['run'][:40])}", step["run"]


def words(script: str) -> list[str]:
    """The words of a shell script as the shell splits them (quotes removed, comments dropped), each
    line break outside quotes read as ``;``, the end of a command."""
    joined, quote, comment = [], None, False
    for char in script.replace("\\\n", " "):
        if comment:
            comment = char != "\n"
            if comment:
                continue
        elif char == "#" and quote is None and (not joined or joined[-1] in " \t;\n"):
            comment = True
            continue
        elif char in "'\"" and quote in (None, char):
            quote = None if quote else char
        joined.append(";" if char == "\n" and quote is None else char)
    lexer = shlex.shlex("".join(joined), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def commands(script: str) -> list[list[str]]:
    """The simple commands of a script, each as its words, less leading ``VAR=value`` words and
    ``exec``, ``env``, ``nice``, ``time`` (``a && b | c`` gives three)."""
    found, current = [], []
    for word in words(script) + [";"]:
        if set(word) <= set("();<>|&"):
            if current:
                found.append(current)
            current = []
        elif current or not (re.match(r"^\w+=", word) or word in ("exec", "env", "nice", "time")):
            current.append(word)
    return found


def make_targets_run(script: str) -> list[str]:
    """The targets a script asks ``make`` for (``make VAR=value -s target`` gives ``target``)."""
    return [word for command in commands(script) if Path(command[0]).name == "make"
            for word in command[1:] if not word.startswith("-") and "=" not in word]


def python_modules_run(script: str) -> list[str]:
    """The modules a script runs with ``python -m`` (any python: ``python3``, ``.venv/bin/python``)."""
    return [command[2] for command in commands(script)
            if re.fullmatch(r"python(3(\.\d+)?)?", Path(command[0]).name) and command[1:2] == ["-m"]
            and len(command) > 2]


def makefile_targets() -> set[str]:
    """The targets the Makefile defines (rules whose target is a name, not a variable)."""
    targets = set()
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z][\w.-]*(?:\s+[A-Za-z][\w.-]*)*)\s*:(?!=)", line)
        if match:
            targets |= set(match.group(1).split())
    return targets


def effective_env(workflow_: dict, job: dict, step: dict | None = None) -> dict:
    """The environment a step sees from the workflow's, the job's and its own ``env``."""
    return {**workflow_.get("env", {}), **job.get("env", {}), **((step or {}).get("env", {}))}


def expand(text: str, env: dict) -> str:
    """``text`` with ``$NAME`` and ``${NAME}`` replaced from ``env`` (left as they are when unset)."""
    return re.sub(r"\$\{?(\w+)\}?", lambda m: str(env.get(m.group(1), m.group(0))), text)


def test_the_workflows_exist_and_parse():
    assert {path.name for path in WORKFLOW_FILES} >= {"ci.yml", "publish.yml", "weekly.yml"}
    for path in WORKFLOW_FILES:
        assert load(path).get("jobs"), f"{path.name} has no jobs"


def test_every_make_target_a_workflow_runs_is_defined_in_the_makefile():
    defined = makefile_targets()
    assert {"test", "book", "lint", "notebooks"} <= defined  # the reader of the Makefile reads it
    for where, script in scripts():
        missing = [target for target in make_targets_run(script) if target not in defined]
        assert not missing, f"{where} runs `make {' '.join(missing)}`, which the Makefile does not define"


def test_every_python_module_a_workflow_runs_exists_in_the_checkout():
    run = [(where, module) for where, script in scripts() for module in python_modules_run(script)]
    assert any(module.startswith("tools.") for _, module in run)
    for where, module in run:
        if not module.startswith("tools."):
            continue
        base = ROOT.joinpath(*module.split("."))
        assert base.with_suffix(".py").is_file() or (base / "__init__.py").is_file(), (
            f"{where} runs `python -m {module}`, which is not in the checkout")


def test_every_job_has_a_time_limit():
    for path in WORKFLOW_FILES:
        for name, job in jobs(load(path)):
            assert isinstance(job.get("timeout-minutes"), int), f"{path.name}: job {name} has no timeout-minutes"


def test_every_action_is_pinned_to_a_full_commit_sha_with_its_version_in_a_comment():
    for path in WORKFLOW_FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = re.match(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$", line)
            if not match or match.group(1).startswith("./"):
                continue
            action, rest = match.groups()
            assert SHA_PINNED.match(action), f"{path.name}:{number}: {action} is not pinned to a 40-hex commit SHA"
            assert re.search(r"#\s*v\d", rest), f"{path.name}:{number}: {action} has no `# vX.Y.Z` comment"


def test_no_run_script_interpolates_an_expression():
    # A value reaches a script through `env:` and the shell's quoting, never pasted into its text.
    for where, script in scripts():
        assert "${{" not in script, f"{where} interpolates an expression into its script; pass it through env"


def test_the_ci_script_still_runs_the_readmes_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"`([^`]+)` is what CI runs \(`\.ci/run`\)", readme)
    assert match, "the README no longer says which command CI runs (`... is what CI runs (`.ci/run`)`)"
    command = match.group(1)
    assert command in re.search(r"## The two commands\n+```bash\n(.*?)```", readme, re.S).group(1)
    lines = [line.strip() for line in CI_SCRIPT.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert any(words(line)[-len(words(command)):] == words(command) for line in lines), (
        f".ci/run no longer runs the README's test command `{command}`")


def test_ci_runs_the_ci_script_on_pull_requests_and_pushes_to_main():
    ci = workflow("ci.yml")
    assert "pull_request" in ci["on"] and ci["on"]["push"]["branches"] == ["main"]
    assert [step["run"] for _, _, step in steps(ci) if step.get("run", "").strip() == "bash .ci/run"]


def cache_steps(kind: str):
    return [step for _, _, step in steps(workflow("ci.yml"))
            if step.get("uses", "").startswith(f"actions/cache/{kind}@")]


def invalidate_needs() -> set[str]:
    """What ``python -m tools.booktools invalidate`` and the build read from an earlier run, relative to the
    checkout: the chapters' keys and execution times, the execution cache (as ``_config.yml`` names it) and the
    trained runs."""
    import os

    from vitbias import runs

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    saved = os.environ.pop(runs.RUNS_VARIABLE, None)
    try:
        run_cache = runs.runs_folder()
    finally:
        if saved is not None:
            os.environ[runs.RUNS_VARIABLE] = saved
    paths = [booktools.CHAPTER_KEYS, booktools.CHAPTER_SECONDS, ROOT / config["execute"]["cache"], run_cache]
    return {path.relative_to(ROOT).as_posix() for path in paths}


def cached_paths(step: dict) -> set[str]:
    return {line.strip().rstrip("/") for line in step["with"]["path"].splitlines() if line.strip()}


def test_the_cache_holds_everything_invalidate_and_the_build_read_from_an_earlier_run():
    needed = invalidate_needs()
    assert len(needed) == 4
    for kind in ("restore", "save"):
        [step] = cache_steps(kind)
        missing = needed - cached_paths(step)
        assert not missing, f"ci.yml's cache {kind} step misses {sorted(missing)}"


def test_the_cache_key_ends_in_the_run_id_and_is_restored_by_its_prefix():
    [restore], [save] = cache_steps("restore"), cache_steps("save")
    key = restore["with"]["key"]
    assert key == save["with"]["key"] and key.endswith("${{ github.run_id }}")
    prefix = key[: -len("${{ github.run_id }}")]
    assert [line.strip() for line in restore["with"]["restore-keys"].splitlines() if line.strip()] == [prefix]


def test_only_main_saves_the_cache_and_a_cold_run_restores_nothing():
    ci = workflow("ci.yml")
    [restore], [save] = cache_steps("restore"), cache_steps("save")
    assert "github.ref == 'refs/heads/main'" in save["if"]
    assert ci["on"]["workflow_dispatch"]["inputs"]["cold"]["type"] == "boolean"
    assert restore.get("if", "").replace(" ", "") == "${{!inputs.cold}}", "a cold run restores the cache"
    assert not [step for _, _, step in steps(ci) if step.get("uses", "").startswith("actions/cache@")], (
        "actions/cache saves from every branch; use actions/cache/restore and actions/cache/save")


def test_every_workflow_reads_the_contents_only_unless_a_job_needs_more():
    for path in WORKFLOW_FILES:
        declared = load(path).get("permissions")
        assert declared in ({}, {"contents": "read"}), f"{path.name}: top-level permissions {declared}"


def test_a_write_permission_is_granted_only_to_a_job_that_uses_it():
    uses = {"contents": lambda job: any("git push" in step.get("run", "") for step in job.get("steps", [])),
            "pages": lambda job: any(step.get("uses", "").startswith("actions/deploy-pages@")
                                     for step in job.get("steps", [])),
            "id-token": lambda job: any(step.get("uses", "").startswith("actions/deploy-pages@")
                                        for step in job.get("steps", [])),
            "issues": lambda job: any("gh issue" in step.get("run", "") for step in job.get("steps", []))}
    for path in WORKFLOW_FILES:
        for name, job in jobs(load(path)):
            for scope, level in (job.get("permissions") or {}).items():
                if level == "write":
                    assert scope in uses and uses[scope](job), f"{path.name}: job {name} has {scope}: write unused"


def publish_jobs_running(predicate):
    publish = workflow("publish.yml")
    return [(name, job, step) for name, job, step in steps(publish) if predicate(step.get("run", ""))]


def test_the_notebooks_branch_pushed_is_the_book_branch_the_site_and_notebooks_were_built_for():
    publish = workflow("publish.yml")
    built_for = {effective_env(publish, job, step).get("BOOK_BRANCH")
                 for _, job, step in publish_jobs_running(lambda run: "make notebooks" in run or ".ci/run" in run)}
    pushed = set()
    for _, job, step in publish_jobs_running(lambda run: "git push" in run):
        tokens = words(step["run"])
        start = tokens.index("push")
        refspecs = [token for token in tokens[start + 1:] if ":" in token and not token.startswith("-")]
        pushed |= {expand(spec.split(":", 1)[1], effective_env(publish, job, step)).removeprefix("refs/heads/")
                   for spec in refspecs}
    assert built_for and None not in built_for, "publish.yml builds without BOOK_BRANCH"
    assert pushed, "publish.yml pushes no branch"
    assert pushed == built_for, f"publish.yml pushes {sorted(pushed)} but builds for BOOK_BRANCH {sorted(built_for)}"


def test_the_notebooks_branch_is_pushed_without_the_workflows_which_the_jobs_token_may_not_write():
    [(_, _, step)] = publish_jobs_running(lambda run: "git push" in run)
    removed = [command for command in commands(step["run"])
               if command[:2] == ["git", "rm"] and "--cached" in command and ".github" in command]
    assert removed, "the notebooks branch would carry .github/workflows/, which GITHUB_TOKEN may not push"


def test_the_published_launch_buttons_name_this_repository_through_the_environment():
    env = workflow("publish.yml").get("env", {})
    assert env.get("BOOK_REPOSITORY_URL") == "${{ github.server_url }}/${{ github.repository }}"


def test_the_notebooks_are_checked_before_they_are_pushed_and_the_site_deployed_after():
    publish = workflow("publish.yml")
    [(pusher, job, _)] = publish_jobs_running(lambda run: "git push" in run)
    runs = [step.get("run", "") for step in job["steps"]]
    checks = [i for i, run in enumerate(runs) if "tools.ci" in python_modules_run(run) and "notebooks" in run]
    push = next(i for i, run in enumerate(runs) if "git push" in run)
    assert checks and checks[0] < push, f"{pusher} pushes the notebooks without `python -m tools.ci notebooks`"
    [deployer] = [name for name, job_ in jobs(publish)
                  if any(step.get("uses", "").startswith("actions/deploy-pages@") for step in job_.get("steps", []))]
    needs = publish["jobs"][deployer]["needs"]
    assert pusher in ([needs] if isinstance(needs, str) else needs), f"{deployer} does not wait for {pusher}"


def test_publishing_runs_on_publish_tags_and_by_hand():
    on = workflow("publish.yml")["on"]
    assert on["push"]["tags"] == ["publish-*"] and "workflow_dispatch" in on


def test_the_weekly_check_builds_cold_launches_the_lab_checks_links_and_opens_an_issue_on_failure():
    weekly = workflow("weekly.yml")
    assert weekly["on"]["schedule"] and "workflow_dispatch" in weekly["on"]
    assert not [step for _, _, step in steps(weekly) if step.get("uses", "").startswith("actions/cache")]
    assert [step for _, _, step in steps(weekly) if step.get("run", "").strip() == "bash .ci/run"]
    assert [step for _, _, step in steps(weekly) if "linkcheck" in step.get("run", "")]
    assert [step for _, _, step in steps(weekly) if step.get("run", "").strip() == "make launched"]
    [issue] = [job for _, job in jobs(weekly) if any("gh issue create" in s.get("run", "") for s in job["steps"])]
    assert issue["if"].replace(" ", "") == "${{failure()}}" and len(issue["needs"]) == len(weekly["jobs"]) - 1


def test_make_lint_checks_the_workflows_offline_with_linters_pinned_apart_from_the_book():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lint = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml" in lint
    assert "zizmor --offline .github/workflows" in lint
    pins = [line for line in (ROOT / "tools" / "requirements-lint.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert {line.split("==")[0] for line in pins} >= {"check-jsonschema", "zizmor"}
    assert all(re.fullmatch(r"[\w.-]+==[\w.]+", line) for line in pins), "tools/requirements-lint.txt pins exactly"
    stamp_rule = re.search(r"^\$\(STAMP\):(.*)$", makefile, re.M).group(1)
    assert "requirements-lint" not in stamp_rule  # a change of the linters re-executes no chapter


@pytest.mark.parametrize("script, targets", [
    ("make test", ["test"]), ("cd x && make VITBIAS_PROFILE=gpu book wheel; make -s notebooks", ["book", "wheel",
                                                                                               "notebooks"]),
    ('echo "cold make test failed"', []), ("make env\n.venv/bin/make lint | tee log", ["env", "lint"]),
    ("apt-get install -y make python3 \\\n  git", []), ('body="a\nmake b"\nmake c', ["c"]),
    ("# the README's command\nmake test # it's this one", ["test"])])
def test_the_reader_of_scripts_finds_the_make_targets(script, targets):
    assert make_targets_run(script) == targets


def test_the_reader_of_scripts_finds_the_python_modules():
    script = 'mapfile -t c < <(python3 -m tools.ci drifted)\n.venv/bin/python -m tools.booktools reference "${c[@]}"'
    assert python_modules_run(script) == ["tools.ci", "tools.booktools"]
