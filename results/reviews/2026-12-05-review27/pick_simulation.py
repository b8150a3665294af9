"""Not an evaluation: with the judge's own schedule_hidden_calls and pick_checked_call, how often a timing compares
no seeded call element by element (so a module wrong on the seeded timed calls only, within their digests, is not
seen). CPU: one round of cpu_timing_trials=3 (the usual: more only over the slack); GPU: warm-up + 10 rounds of 10."""
import random, secrets
from drk.gym.judge import schedule_hidden_calls, pick_checked_call
from drk.gym.secret import SeedStream

def escapes(counts, trials=20000, rate=0.3, n_sets=4):
    missed = 0
    for t in range(trials):
        seeds = SeedStream(secrets.token_bytes(16))
        sched = schedule_hidden_calls(counts, n_sets, rate, random.Random(t))
        seen = False
        for count, slots in zip(counts, sched):
            timed = [True] * count
            for slot, _ in sorted(slots, reverse=True):
                timed.insert(slot, False)
            pick = pick_checked_call(timed, seeds)
            seen |= timed[pick]
        missed += not seen
    return missed / trials

print(f"CPU (1 round of 3): no seeded call compared in {escapes([3]):.1%} of timings")
print(f"CPU (3 rounds of 3): {escapes([3, 3, 3]):.1%}")
print(f"GPU (warm-up + 10 rounds of 10): {escapes([10] * 11, trials=5000):.2%}")
