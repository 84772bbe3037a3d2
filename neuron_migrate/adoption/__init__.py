"""Gates for adopting the tool on an existing repo: baseline, --add-noqa, --since."""
