"""In-container side of `verifier review`: is pytest's reporting path still the one we installed?

The repository's code shares the worker process with pytest and with the reporting plugin
(``isolation: in-process``), so it can rewrite what pytest reports. This module does not make
that impossible; it takes away the cheap ways. A `Watch` fingerprints, before any repository
code is imported, the functions through which an outcome travels from a test to the report
pipe (pytest's runner, reports, skipping and call machinery, pluggy's hook calls, this
plugin's own functions; its writer binds ``os.write`` when it is made) and the report pipe itself
(device and inode); after collection it adds the hook implementations registered for the
reporting hooks (conftests legitimately add theirs while collecting). After collection and
after every test the plugin asks `changed()`: any difference ends the session as *tampered*,
which the host reports as a run that did not complete (not ok, called out by name).

What a determined change can still do, in the same process: replace the objects this module
compares against, or this module's own code, or write forged records to the pipe before it
is checked. The documentation says so (docs/review.md, "What the sandbox does and does not
stop").

Standard library, pytest and pluggy only; imported by the worker, never on the host.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

#: module -> dotted attributes on the path from a test's call to its report.
REPORTING_PATH: dict[str, tuple[str, ...]] = {
    "_pytest.runner": (
        "pytest_runtest_protocol",
        "runtestprotocol",
        "call_and_report",
        "call_runtest_hook",
        "check_interactive_exception",
        "pytest_runtest_makereport",
        "pytest_runtest_setup",
        "pytest_runtest_call",
        "pytest_runtest_teardown",
        "CallInfo.from_call",
        "SetupState.setup",
        "SetupState.teardown_exact",
    ),
    "_pytest.reports": (
        "TestReport.__init__",
        "TestReport.from_item_and_call",
        "BaseReport.passed",
        "BaseReport.failed",
        "BaseReport.skipped",
        "CollectReport.__init__",
    ),
    "_pytest.python": ("pytest_pyfunc_call", "Function.runtest", "Function.setup"),
    "_pytest.skipping": ("pytest_runtest_makereport", "pytest_runtest_setup", "pytest_runtest_call"),
    "_pytest.unittest": ("TestCaseFunction.runtest", "pytest_runtest_makereport"),
    "_pytest.main": ("pytest_runtestloop", "Session.perform_collect"),
    "_pytest.outcomes": ("fail", "skip", "xfail", "exit", "OutcomeException.__init__"),
    "pluggy._hooks": ("HookCaller.__call__",),
    "pluggy._manager": ("PluginManager._hookexec", "PluginManager.register", "PluginManager.unregister"),
    "pluggy._callers": ("_multicall",),
}

#: The hooks an outcome passes through once collection is over.
REPORTING_HOOKS = (
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_runtest_logfinish",
    "pytest_pyfunc_call",
    "pytest_report_teststatus",
    "pytest_runtestloop",
    "pytest_exception_interact",
)


def _resolve(module: str, dotted: str) -> object:
    obj: object = sys.modules.get(module) or importlib.import_module(module)
    for part in dotted.split("."):
        # The class's own slot (a property, a function), not what it evaluates to.
        obj = obj.__dict__[part] if isinstance(obj, type) and part in obj.__dict__ else getattr(obj, part)
    return obj


def _fingerprint(extra: Iterable[tuple[str, object]]) -> dict[str, object]:
    prints: dict[str, object] = {}
    for module, names in REPORTING_PATH.items():
        for dotted in names:
            try:
                prints[f"{module}.{dotted}"] = _resolve(module, dotted)
            except (ImportError, AttributeError, KeyError):
                prints[f"{module}.{dotted}"] = None  # absent in this pytest: it must stay absent
    prints.update(extra)
    return prints


def _pipe(fd: int) -> tuple[int, int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mode


def _owner(pluginmanager: Any, plugin_id: int) -> object:
    for plugin in pluginmanager.get_plugins():
        if id(plugin) == plugin_id:
            return plugin
    return None


def _hookimpls(pluginmanager: Any) -> dict[str, tuple[tuple[int, object], ...]]:
    out: dict[str, tuple[tuple[int, object], ...]] = {}
    for name in REPORTING_HOOKS:
        caller = getattr(pluginmanager.hook, name, None)
        impls = caller.get_hookimpls() if caller is not None else []
        out[name] = tuple((id(i.plugin), i.function) for i in impls)
    return out


class Watch:
    """Fingerprints of the reporting path, taken before any repository code runs."""

    def __init__(self, report_fd: int, own: Callable[[], Iterable[tuple[str, object]]]) -> None:
        self.report_fd = report_fd
        self._own = own  # read again at every check: the objects bound *now*
        self._prints = _fingerprint(own())
        self._pipe = _pipe(report_fd)
        self._hooks: dict[str, tuple[tuple[int, object], ...]] | None = None
        self._started: dict[str, tuple[tuple[int, object], ...]] = {}
        self._plugin: object = None

    def started(self, pluginmanager: Any) -> None:
        """At session start (pytest's plugins, the root conftests and this plugin are in): remember
        the hook implementations, before test modules and the code they import run."""
        self._started = _hookimpls(pluginmanager)

    def collected(self, pluginmanager: Any, plugin: object) -> list[str]:
        """After collection: what changed so far; then remember the hook implementations.

        Collecting legitimately adds plugins that are modules (conftests, ``pytest_plugins``);
        a reporting hook implemented by anything else that appeared while the tests were
        imported is the code under test registering its own plugin."""
        self._plugin = plugin
        changed = self._compare(pluginmanager)
        now = _hookimpls(pluginmanager)
        before = self._started
        for name in REPORTING_HOOKS:
            old = set(before.get(name, ()))
            for plugin_id, function in now[name]:
                if (plugin_id, function) in old:
                    continue
                owner = _owner(pluginmanager, plugin_id)
                if not isinstance(owner, ModuleType):
                    changed.append(f"hook {name} (a {type(owner).__name__} plugin registered while collecting)")
        self._hooks = now
        return changed

    def changed(self, pluginmanager: Any) -> list[str]:
        """What differs from the fingerprints (empty: nothing)."""
        changed = self._compare(pluginmanager)
        if self._hooks is not None and _hookimpls(pluginmanager) != self._hooks:
            now = _hookimpls(pluginmanager)
            changed.extend(f"hook {name}" for name in REPORTING_HOOKS if now[name] != self._hooks[name])
        return changed

    def _compare(self, pluginmanager: Any) -> list[str]:
        now = _fingerprint(self._own())
        changed = [name for name, obj in self._prints.items() if now.get(name) is not obj]
        if _pipe(self.report_fd) != self._pipe:
            changed.append("the report pipe")
        if self._plugin is not None and not pluginmanager.is_registered(self._plugin):
            changed.append("the reporting plugin (unregistered)")
        return changed


def own_functions(namespace: dict[str, Any], names: Iterable[str], cls: type) -> Callable[[], list[tuple[str, object]]]:
    """What the reporting plugin's module functions and its class's methods are bound to, when asked."""
    names = tuple(names)
    methods = tuple(k for k, v in vars(cls).items() if callable(v))

    def now() -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = [(f"plugin.{n}", namespace.get(n)) for n in names]
        out.extend((f"plugin.{cls.__name__}.{k}", vars(cls).get(k)) for k in methods)
        return out

    return now
