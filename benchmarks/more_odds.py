"""The odds engines behind the table page's charts for the mechanics that had none:
contested checks, spells, initiative, new characters, level-ups, FBC conflicts.

Run: python benchmarks/more_odds.py
For each engine: its worst case over the schema's limits, and a typical case timed
against brute force in the same run (every dice sequence through the rules, the way
the tests' oracle checks them), with the ratio. Target: under 50 ms, 10x brute force.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from fairroll.odds import fast_battle as fb_odds
from fairroll.odds import stat_skill as ss_odds
from fairroll.odds.fbc import conflict_odds
from fairroll.randomness import SuppliedDice
from fairroll.rules import fast_battle as fb
from fairroll.rules import fbc
from fairroll.rules.stat_skill import Contender, ContestedCheck, resolve_contest


def best_of(run: Callable[[], Any], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def fighter(name: str, **fields: Any) -> fb.Fighter:
    base: dict[str, Any] = {"name": name, "st": 3, "qk": 2, "in_": 1, "ma": 1, "mr": 1, "max_hp": 6}
    return fb.Fighter(**{**base, **fields})


def contest_brute(contest: ContestedCheck) -> Counter[str]:
    finals: Counter[str] = Counter()
    for a_stat, a_skill, b_stat, b_skill in itertools.product(range(1, 11), repeat=4):
        dice = SuppliedDice(
            {"a.stat": [a_stat], "a.skill": [a_skill], "b.stat": [b_stat], "b.skill": [b_skill]}
        )
        finals[resolve_contest(contest, dice).a.final] += 1
    return finals


def coins_brute(run: Callable[[SuppliedDice], Any], groups: dict[str, int]) -> Counter[Any]:
    seen: Counter[Any] = Counter()
    names = list(groups)
    for flips in itertools.product((1, 2), repeat=sum(groups.values())):
        supplied, at = {}, 0
        for name in names:
            supplied[name] = list(flips[at : at + groups[name]])
            at += groups[name]
        seen[run(SuppliedDice(supplied))] += 1
    return seen


def main() -> None:
    rows: list[tuple[str, float, float | None]] = []

    contest = ContestedCheck(
        a=Contender(stat=5, skill=3, fate_dice=2, activate_threat="always"),
        b=Contender(stat=3, skill=5, skill_trick=2, activate_threat="on_failure", fate_dice=1),
    )
    rows.append(
        (
            "stat-skill contest",
            best_of(lambda: ss_odds.contest_odds(contest)),
            best_of(lambda: contest_brute(contest), repeat=1),
        )
    )

    grub = fighter("Grub", ma=9, spells=["Fireball"])
    target = fighter("Zippy", mr=2, armor="Warded Robe")
    cast = fb.SpellCast(attacker=grub, defender=target, spell="Fireball")
    rows.append(
        (
            "fast-battle spell (SP 4, FRM 3)",
            best_of(lambda: fb_odds.spell_odds(cast)),
            best_of(
                lambda: coins_brute(
                    lambda d: fb.resolve_spell(cast, d).nullified, {"spell": 4, "resist": 3}
                ),
                repeat=1,
            ),
        )
    )

    new = fb.NewCharacter(
        name="N", allocation=fb.Allocation(st=6), bonus=["st", "st", "qk"], buy=[]
    )
    rows.append(
        (
            "fast-battle character (ST 6..8)",
            best_of(lambda: fb_odds.character_odds(new)),
            best_of(lambda: _character_brute(new), repeat=1),
        )
    )

    sheet = fb.Sheet(name="L", st=5, qk=1, in_=1, ma=1, mr=1, max_hp=20, xp="2.5")
    level_up = fb.LevelUp(character=sheet, xp_gained="3.5", assign=["st", "st"])
    rows.append(
        (
            "fast-battle level-up (2 levels, ST 6 and 7)",
            best_of(lambda: fb_odds.level_up_odds(level_up)),
            best_of(
                lambda: coins_brute(
                    lambda d: fb.resolve_level_up(level_up, d).character.max_hp, {"hp": 13}
                ),
                repeat=1,
            ),
        )
    )

    # Worst cases over the schema's limits (no brute force could finish these).
    eight_tied = fb.Initiative(fighters=[fighter(f"F{i}", qk=5) for i in range(8)])
    rows.append(
        ("initiative, 8 tied (worst)", best_of(lambda: fb_odds.initiative_odds(eight_tied)), None)
    )
    giant = fb.Sheet(name="G", st=99, qk=1, in_=0, ma=1, mr=1, max_hp=6, xp="0")
    most_levels = fb.LevelUp(character=giant, xp_gained="297")
    rows.append(
        (
            "level-up, 99 levels of ST 99 (worst)",
            best_of(lambda: fb_odds.level_up_odds(most_levels)),
            None,
        )
    )
    strongest = fb.NewCharacter(
        name="S", points=60, allocation=fb.Allocation(st=60), bonus=["st"] * 3
    )
    rows.append(
        ("character, ST 63 (worst)", best_of(lambda: fb_odds.character_odds(strongest)), None)
    )
    # The heaviest conflict: eight participants of 30 dice, each with four kinds of die
    # (Worse splits lost from kept successes, Faster or Slower a natural 6): 5,456 count
    # vectors each, and no two alike (nothing is shared between them).
    heavy = [
        {"worse": 1, "faster": f, "cheaper": c, "expensive": e, "convert": 3}
        for f in (0, 1)
        for c, e in ((3, 0), (0, 3))
    ] + [{"worse": 1, "slower": s, "convert": v} for s, v in ((1, 1), (2, 2), (3, 3))]
    heavy += [{"worse": 2, "expensive": 2}]
    conflict = fbc.Conflict(
        participants=[
            fbc.Participant(name=f"P{i}", pool=999, risk=30, **adjectives)  # type: ignore[arg-type]
            for i, adjectives in enumerate(heavy)
        ]
    )
    rows.append(
        (
            "FBC conflict, 8 x 30 dice, 4 kinds (worst)",
            best_of(lambda: conflict_odds(conflict)),
            None,
        )
    )

    print(f"{'engine':46} {'ms':>9} {'brute ms':>10} {'ratio':>8}")
    for name, took, brute in rows:
        ratio = f"{brute / took:,.0f}x" if brute else "-"
        brute_ms = f"{brute * 1e3:,.1f}" if brute else "-"
        print(f"{name:46} {took * 1e3:9.3f} {brute_ms:>10} {ratio:>8}")


def _character_brute(new: fb.NewCharacter) -> Counter[int]:
    seen: Counter[int] = Counter()
    for bonus in itertools.product((1, 2), repeat=3):
        st = new.allocation.st + new.bonus[: bonus.count(2)].count("st")
        for hp in itertools.product((1, 2), repeat=st):
            dice = SuppliedDice({"bonus": list(bonus), "hp": list(hp)})
            seen[fb.resolve_new_character(new, dice).character.max_hp] += 2 ** (8 - st)
    return seen


if __name__ == "__main__":
    main()
