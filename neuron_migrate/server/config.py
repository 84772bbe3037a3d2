"""The settings a document is checked with: the nearest pyproject.toml (re-read when it
changes) and the client's own settings (`unsafeFixes`, `targetDevice`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from neuron_migrate.api import Job, Options, make_job
from neuron_migrate.config.settings import ConfigError, Settings, find_config, load_settings


@dataclass(frozen=True)
class ClientSettings:
    """What the editor says: initializationOptions, or workspace/didChangeConfiguration."""

    unsafe_fixes: bool = False
    target_device: str | None = None

    @classmethod
    def from_client(cls, value: Any, base: ClientSettings | None = None) -> ClientSettings:
        """Read `{"unsafeFixes": true, "targetDevice": "cpu"}`, also nested under
        `neuron-migrate` / `neuron_migrate` (how editors namespace a server's settings)."""
        base = base or cls()
        if not isinstance(value, dict):
            return base
        for key in ("neuron-migrate", "neuron_migrate", "neuronMigrate"):
            if isinstance(value.get(key), dict):
                value = value[key]
                break
        unsafe = value.get("unsafeFixes", value.get("unsafe-fixes", base.unsafe_fixes))
        device = value.get("targetDevice", value.get("target-device", base.target_device))
        return cls(
            unsafe_fixes=bool(unsafe),
            target_device=device if isinstance(device, str) and device else base.target_device,
        )


class SettingsStore:
    """Settings by config file, loaded once and dropped by reload() when a pyproject changes."""

    def __init__(self, client: ClientSettings | None = None):
        self.client = client or ClientSettings()
        self._by_config: dict[Path | None, Settings] = {}
        self._config_of: dict[Path, Path | None] = {}
        self._jobs: dict[tuple[Settings, Options], Job] = {}
        # the last configuration problem, for the editor to show once
        self.problems: list[str] = []

    def reload(self) -> None:
        self._by_config.clear()
        self._config_of.clear()
        self._jobs.clear()

    def set_client(self, client: ClientSettings) -> None:
        self.client = client
        self.reload()

    def settings_for(self, path: Path) -> Settings:
        folder = path.parent
        if folder not in self._config_of:
            self._config_of[folder] = find_config(folder) if folder.is_dir() else None
        config = self._config_of[folder]
        if config not in self._by_config:
            self._by_config[config] = self._load(config, folder)
        return self._by_config[config]

    def _load(self, config: Path | None, folder: Path) -> Settings:
        start = folder if folder.is_dir() else Path.cwd()
        try:
            settings = load_settings(config, start)
        except ConfigError as exc:
            self.problems.append(str(exc))
            settings = Settings(root=start.resolve())
        if self.client.target_device:
            try:
                candidate = settings.with_overrides(target_device=self.client.target_device)
                candidate.target  # noqa: B018 - validates the device name
                settings = candidate
            except ConfigError as exc:
                self.problems.append(f"targetDevice: {exc}")
        return settings

    def job(self, settings: Settings, options: Options) -> Job:
        """One Job per settings and options: its rule sets are built once (a job fixing chosen
        findings shares them with the job of its settings)."""
        if options.only is not None:
            return replace(self.job(settings, replace(options, only=None)), options=options)
        key = (settings, options)
        if key not in self._jobs:
            self._jobs[key] = make_job(settings, options)
        return self._jobs[key]
