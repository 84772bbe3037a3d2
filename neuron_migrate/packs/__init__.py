"""Rule packs: loading and validating rule files, the closed vocabulary, rule docs."""
