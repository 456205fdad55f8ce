"""A small corpus of spam-like and ham-like messages that the text tests share."""

import numpy as np

#: Twelve messages, spam (1) and ham (0) in turn.
DOCS = [
    "Free entry in a weekly competition, win cash now!",
    "Hey, are we still on for lunch today?",
    "WINNER!! You have won a free prize; call now",
    "I'll call you later about the lunch plans",
    "Claim your free cash prize now, text WIN to 80086",
    "Can you pick up milk on the way home?",
    "Urgent: your mobile number has won cash, call today",
    "See you at home, the plans changed again",
    "Free ringtone offer: reply WIN now",
    "Are you home yet? Dinner is ready",
    "Congratulations you won a free holiday call now",
    "Let me know when you get home today",
]
Y = np.array([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0])
