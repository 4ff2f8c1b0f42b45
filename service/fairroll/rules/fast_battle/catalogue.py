"""fairroll's own default store for the Fast Battle System.

**Not from the seed.** The rules text names only the sample character's
"Standard Issue Sword (AF: 2)", "Light Robe (FRW: 1 FRM: 1 QK: 0 MA: 0)" and
"Potion of Cure Light Wounds (heals 3 HP)", and gives no prices. Everything
else here, and every price, is this service's invention, priced so that the
sample character Zippy (5 gold, 2 left) can buy the sword, robe and potion.
Requests may define their own items inline instead.

Standard issue (``standard_issue``), what a new character may buy: "the player buys
any standard issue weapon and, if desired, a standard issue armor". The seed's own
lists name one of each, both worn by its sample new character: the "Standard Issue
Sword" and the "Light Robe". fairroll adds two standard issue weapons of its own (the
dagger and the mace, named so); every other weapon and armour is not standard issue.
"""

from __future__ import annotations

from fairroll.rules.fast_battle.items import Armor, Boost, Heal, Potion, Spell, Trinket, Weapon

__all__ = ["ARMORS", "POTIONS", "SPELLS", "TRINKETS", "WEAPONS"]

WEAPONS: dict[str, Weapon] = {
    w.name: w
    for w in (
        Weapon(name="Standard Issue Sword", af=2, hands=1, price=1, standard_issue=True),
        Weapon(name="Standard Issue Dagger", af=1, hands=1, price=1, standard_issue=True),
        Weapon(name="Standard Issue Mace", af=3, hands=1, min_st=3, price=2, standard_issue=True),
        Weapon(name="Great Axe", af=4, hands=2, min_st=4, price=4),
        Weapon(name="Rapier", af=3, hands=1, min_qk=3, min_level=2, price=4),
    )
}

ARMORS: dict[str, Armor] = {
    a.name: a
    for a in (
        Armor(
            name="Light Robe",
            frw=1,
            frm=1,
            qk_penalty=0,
            ma_penalty=0,
            price=1,
            standard_issue=True,
        ),
        Armor(name="Leather Jerkin", frw=2, frm=0, qk_penalty=0, ma_penalty=1, price=2),
        Armor(name="Chain Mail", frw=3, frm=0, qk_penalty=1, ma_penalty=2, price=4),
        Armor(name="Warded Robe", frw=1, frm=3, qk_penalty=0, ma_penalty=0, price=4),
    )
}

POTIONS: dict[str, Potion] = {
    p.name: p
    for p in (
        Potion(name="Potion of Cure Light Wounds", effect=Heal(amount=3), price=1),  # the seed's
        Potion(name="Potion of Cure Serious Wounds", effect=Heal(amount=6), price=3),
        Potion(name="Potion of Quickness", effect=Boost(attribute="qk", amount=2), price=2),
        Potion(name="Potion of Strength", effect=Boost(attribute="st", amount=2), price=2),
    )
}

TRINKETS: dict[str, Trinket] = {
    t.name: t
    for t in (
        Trinket(name="Amulet of Warding", slot="neck", frw_bonus=1, frm_bonus=1, price=6),
        Trinket(name="Ring of Focus", slot="ring", ma_bonus=1, price=5),
        Trinket(name="Bracer of Deflection", slot="wrist", frw_bonus=1, price=4),
        Trinket(name="Earring of Will", slot="ear", mr_bonus=1, price=4),
    )
}

SPELLS: dict[str, Spell] = {
    s.name: s
    for s in (
        Spell(name="Spark", sp=2, min_ma=1, damage=2, price=2),
        Spell(name="Magic Missile", sp=3, min_ma=2, damage=3, price=4),
        Spell(name="Fireball", sp=4, min_ma=4, damage=5, price=8),
    )
}
