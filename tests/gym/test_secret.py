"""Hidden seeds: the same for the same evaluation, different for another candidate, unknown without the secret."""

from drk.gym.secret import SeedStream, evaluation_key, judge_secret


def test_seed_streams_are_repeatable_and_keyed():
    key = evaluation_key(b"secret", "problem", "candidate A", {"seed": 0})
    a, b = SeedStream(key), SeedStream(key)
    first = [a.next() for _ in range(5)]
    assert first == [b.next() for _ in range(5)] and len(set(first)) == 5
    other = SeedStream(evaluation_key(b"secret", "problem", "candidate B", {"seed": 0}))
    assert [other.next() for _ in range(5)] != first
    guessed = SeedStream(evaluation_key(b"another secret", "problem", "candidate A", {"seed": 0}))
    assert [guessed.next() for _ in range(5)] != first
    assert all(0 <= SeedStream(key).below(7) < 7 for _ in range(20))


def test_judge_secret_is_stable_and_private(tmp_path, monkeypatch):
    monkeypatch.delenv("DRK_JUDGE_SECRET", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    judge_secret.cache_clear()
    try:
        first = judge_secret()
        judge_secret.cache_clear()
        assert judge_secret() == first and len(first) == 32
        assert (tmp_path / "drk" / "judge_secret").stat().st_mode & 0o077 == 0  # only its owner can read it
    finally:
        judge_secret.cache_clear()
