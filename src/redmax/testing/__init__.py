"""Testing utilities: seeded random models and a bridge to Pinocchio (an optional, test-only dependency)."""
