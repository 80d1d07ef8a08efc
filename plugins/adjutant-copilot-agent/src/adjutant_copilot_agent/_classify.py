"""What one sentence of a meeting says, in its ordinary words: that something was
decided, that someone will do something, or that a question is open (`classify`). The
phrasings are the common English ones, not the words of any one meeting; `_cues` uses
them to check the model's items.
"""

from __future__ import annotations

import re

from ._state import words_in

__all__ = ["aside", "classify"]

#: A decision: said to be one ("decided", "agreed", "final call"), a choice made ("let's
#: go with", "we're going with", "we'll use", "X it is"), something ruled out ("let's
#: not", "we'll skip", "we won't"), kept or dropped ("we're keeping", "we're dropping"),
#: or a limit set ("is capped at", "stays at").
_CHOICE = (r"go with|go for|go ahead with|go ahead|use|keep|stick with|stay with|choose|pick|"
           r"opt for|drop|skip|cancel|postpone|delay|switch to|switch|move to|move|hold|"
           r"not (?!decide\b)|stop|"
           r"launch|ship|do|make it|hire|buy|rent|order|book|wait|split|raise|lower|cut|"
           r"increase|reduce|change|replace|take|lock in|lock|fix|set")
#: After "we": no past, no modal, no state (what "we" did, may or must do is no choice).
_NOT_PAST = (r"(?!(?:were|was|had|did|used|talked|tried|met|saw|went|got|need|needs|should|"
             r"could|might|can|don't|didn't|have|would|may|must|think|know|want|wanted|"
             r"like|love|hope|feel|still|just|always|never|usually|often|took|made|came|"
             r"gave|found|ran|bought|brought|sent|left|kept|chose|spent|paid|told|said|"
             r"thought|lost|won|ate|drove|wrote|sold|[a-z]+ed)\b)")
_DAYS_ = (r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|"
          r"march|april|may|june|july|august|september|october|november|december")
_DECISION = re.compile(
    r"\b(?:decided|decide|decision|agreed|agree on|agreement|settled|approved|confirmed|"
    r"the plan is|final answer|final call|final word|we chose|we(?:'ve| have) chosen|"
    r"going with|going ahead with|"
    rf"let(?:'s| us) (?:{_CHOICE})|we(?:'ll| will| shall) (?:{_CHOICE})|"
    r"we(?:'re| are) (?:not going to|keeping|dropping|skipping|cancell?ing|postponing|"
    r"sticking with|staying with|switching to|going for|using|choosing|picking|cancelling|delaying|"
    r"moving to|holding|hiring|buying|renting|leasing|ordering|booking|replacing|"
    r"changing to|splitting|raising|lowering|increasing|reducing)\b(?! out\b| up on\b)"
    r"|we won't|we will not|"
    r"(?:is|are|stays?|remains?) (?:capped|limited|fixed|set|cut|raised|lowered) (?:at|to)|"
    r"stays at|stay at (?:\d|£|\$|€|(?:one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|fifteen|twenty|thirty|forty|fifty|a hundred|the same)\b)|"
    r"(?:that|this) settles it|settles it|no other (?:option|way|choice)|"
    r"(?:we have|there's|there is) no (?:other )?choice|"
    r"(?:the )?only (?:option|way|choice)|"
    r"so be it|(?:is|are) (?:the|our) (?:top |first |main |number one )?priority|"
    r"(?:is|are) top priority|from now on|going forward|(?:that's|that is) (?:settled|decided|"
    r"final))\b"
    r"|\b(?!(?:what|that|this|think|know|guess|hope|sure|yes|so|and|as|but|or|if|how|where|"
    r"who|when|than|though|because|whether|wherever|whatever|way)\b)\w+ it is(?: then)?"
    r"\s*(?:[.!,]|$)"
    # a choice closed: "The red van, final.", "...and that's final."
    r"|,\s*(?:and )?(?:that's |that is )?final[.!]?$"
    # on: "The fete is going ahead.", "The bake sale is on for Saturday."; a price put
    # up; a choice said as "let's say" or "we settle on"
    r"|\b(?:is|are|'s) going ahead\b|\bgoes ahead\b|\b(?:is|are|'s) (?:still )?on for "
    rf"(?:the |this |next )?(?:{_DAYS_}|tonight|tomorrow|\d)"
    r"|\bput (?:the \w+|it|them|prices?) (?:up|down) (?:to|by)\b"
    r"|\blet(?:'s| us) say\b|\b(?:we|we'll|let's) settle on\b"
    # "we're going to use", "We're not renewing the lease": a choice in the progressive
    r"|\bwe(?:'re| are) going to (?:use|go with|stick with|keep|drop|skip|cancel|postpone|"
    r"switch to|hire|rent|buy|hold off)\b"
    r"|\bwe(?:'re| are) not (?!getting\b|talking\b|saying\b|making\b|doing (?:well|badly|"
    r"great)\b|having\b|going\b|looking\b|waiting\b|sure\b)[a-z]+ing\b"
    # a date moved, a thing kept as it is, a rule from a time on
    rf"|\b(?:moves|shifts) to (?:next |this |the )?(?:{_DAYS_}|week|month|spring|summer|"
    r"autumn|winter|\d)"
    r"|\b(?:stays?|remains?) (?:closed|open|shut|blocked|locked|on hold|suspended|frozen|"
    r"out of (?:order|use|service)|the same|as it is|as is|where it is|unchanged)\b"
    # left as it is: "Let's leave the prices exactly as they are."
    r"|\b(?:let(?:'s| us)|we(?:'ll| will)?) leave (?:it|them|that|this|things|everything|"
    r"the [\w-]+(?: [\w-]+)?)(?: exactly| just)? (?:as (?:it is|they are|is)|where (?:it is|"
    r"they are)|alone|unchanged)\b"
    r"|\b(?:is|are|'s|'re) (?:(?:now|definitely) )?off (?:for|until|till|this)\b"
    r"|^(?:[\w']+[,.]\s+)?from (?:this|next|the start of|the end of) (?:week|month|year|term|"
    r"season|spring|summer|autumn|winter|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
    r"august|september|october|november|december)\b"
    # "Tuesdays and Wednesdays, it is." (not "Yes, it is.")
    r"|\b(?!(?:yes|yeah|no|well|so|and|but|oh|because|think|know|guess|hope|sure|what|"
    r"that|this|as|whatever)\b)\w+, it is(?: then)?\s*(?:[.!]|$)"
    # a choice between two, said as what "we" do: "we run the fish special instead",
    # "We're renting the chairs rather than buying them"
    rf"|\bwe(?:'re| are|'ll| will)? {_NOT_PAST}[a-z]+\b[^.?!]*\b(?:instead|rather than)\b"
    # a conclusion drawn: "Then we meet on Mondays.", "Right, then the old van goes."
    r"|^(?:(?:right|okay|ok|so|well|fine|alright|all right|good)[,.]?\s+)?then,?\s+"
    rf"(?:we {_NOT_PAST}[a-z]+\b(?<!ed)|we(?:'re| are) (?!going\b|getting\b|looking\b|"
    r"talking\b|waiting\b|doing\b|running\b|not\b)[a-z]+ing\b|"
    r"the (?:[\w-]+ ){1,3}(?:comes|goes|moves|stays|"
    r"changes|switches|gets)\b)"
    # a quantity changed: "the fee goes up by ten pounds", "it comes off the list"
    # a plan changed, said in the passive: "The picnic is cancelled.", "...is moved to May"
    r"|\b(?:is|are|'s|'re|has been|have been) (?:now )?(?:cancell?ed|postponed|called off|"
    r"scrapped|pushed back|brought forward|moved to|put back|put off)\b"
    # what "we" choose, said in the present: "We keep the Friday slot.", "..., so we drop
    # it", "I think we go with the cheaper one"
    r"|(?:^(?:[\w']+[,.]\s+){0,2}|\b(?:so|then|and)\s+)(?:so |then |and )?"
    r"(?:I think |I guess |I'd say )?we (?:go with|stick with|stay with|switch to|"
    r"keep (?!\w+ing\b)|drop (?!by\b|in\b|off\b|out\b)|skip|cancel|scrap|ditch|hold off)\b"
    # a thing given to someone named: "Jo gets the back room"
    r"|^(?:[\w']+[,.]\s+){0,2}(?:so |then |and )?(?-i:(?!He\b|She\b|It\b|That\b|This\b|"
    r"There\b|Everyone\b|Nobody\b|Who\b|What\b)[A-Z][a-z]+) gets the\b"
    # a verdict: "Two sittings, done.", "Alright, no dessert course." (not "Great, done.")
    r"|^(?!(?:all right|alright|great|good|fine|okay|ok|right|yes|yeah|well|perfect)\b)"
    r"(?:[\w'-]+ ){1,4}[\w'-]+,\s*(?:done|sorted)[.!]?$"
    r"|^(?:fine|ok|okay|alright|all right|right|agreed|good)[,.]\s+no (?!problem\b|worries\b|"
    r"idea\b|thanks\b|way\b|clue\b|rush\b|pressure\b|need\b|chance\b|comment\b|"
    r"question\b|doubt\b|thank\b|bother\b|harm\b)\w+(?: \w+)?[.!]?$"
    r"|\b(?:goes|go) (?:up|down) (?:by|to) (?:\d|a |an |one|two|three|four|five|six|seven|"
    r"eight|nine|ten|twenty|fifty|hundred|half)|\bcomes? off the\b"
    # a proposal's choice, by its speaker: "I think we close on Christmas Day."
    r"|^(?:[\w']+[,.]\s+){0,2}(?:and |so |but )?I (?:think|reckon|'d say|would say) we (?:close|"
    r"shut|open|hire|book|move|switch|replace|charge|cap|limit|ban|allow|keep|drop|skip|"
    r"cancel|scrap|rent|buy|go with|stick with|stay with|postpone)\b"
    # a verdict after a concession: "..., but fine, both days closed."
    r"|\b(?:fine|ok|okay|alright|all right|agreed)[,.]\s+(?:(?!(?:is|are|was|were|has|have|"
    r"been|be|it|it's|that's)\b)[\w'-]+ ){1,3}(?:closed|shut|"
    r"cancell?ed|confirmed|approved|booked|scrapped|off)[.!]?$"
    # a restriction agreed: "Yes, members only for the meteor night.", "cash only this time"
    r"|^(?:yes|yeah|agreed|right|fine|ok|okay|so|then)[,.]?\s+(?!(?:it|it's|that|that's|this|"
    r"i|i'm|we|you|they|he|she|there|is|was|one)\b)(?:[\w'-]+ ){0,2}[\w'-]+ only\b(?! (?:if|"
    r"when|because|just|to|a|the|one)\b)|\b[\w'-]+ only (?:this time|from now on|this year|for "
    r"now)\b"
    # a choice said with its certainty: "The blue one, no question.", "Tuesday, no doubt."
    r"|^(?:[\w'-]+ ){0,4}[\w'-]+,\s*(?:no question|no doubt|no contest|hands down|easily)"
    r"[.!]?$"
    # "The church, surely, the sound is lovely.": a thing named, then its certainty
    r"|^(?!(?:yes|yeah|no|well|oh|sure|ok|okay|right|fine|i|we|you|it|that|this|there)\b)"
    r"(?:the |a |an )?(?:[\w'-]+ ){0,2}[\w'-]+,\s*(?:surely|definitely|obviously|no question|"
    r"no doubt)(?:[,.!]|$)"
    # a verdict opening the sentence: "Done, the flood story leads."
    r"|^(?:done|decided|settled)[,.]\s+(?:[\w'-]+ ){2,}"
    # a cap or limit: "I'd cap it at eighty.", "Ten and not a ticket more.", "no more than
    # six", "then the list closes"; a rule: "nobody takes the van without asking me"
    r"|(?<!should )(?<!could )(?<!might )(?<!to )\b(?:cap|limit) "
    r"(?:it|them|that|this|(?:the |our )?[\w-]+(?: [\w-]+)?) (?:at|to) "
    r"|\bnot (?:a|one) (?:single )?[\w-]+ more\b|\b(?:no more than|a maximum of) "
    # "two per pitch at most", "at the most three" (not "ten pounds at most, I think")
    r"|\b(?:per|each|a) [\w-]+ at (?:the )?most\b|\bat (?:the )?most (?:\d|one|two|three|four|"
    r"five|six|seven|eight|nine|ten|twelve|twenty)\b"
    r"|\b(?:the )?(?:list|orders?|bookings?|sign-?ups?|entries) (?:closes?|(?:is|are) closed)\b"
    r"|\b(?:nobody|no one|no-one) (?!knows\b|says\b|cares\b|likes\b|wants\b|minds\b|"
    r"seems\b)[a-z]+s\b[^.?!]*\b(?:without|except|unless|until|before)\b"
    r"|\b(?:is|are|'s|'re) not allowed to\b|\b(?:nobody|no one|no-one|everyone|everybody) "
    r"(?:is|are) (?:to|allowed to)\b|^(?:[\w']+[,.]\s+)?from (?:today|tomorrow)(?: on)?[,\s]"
    # "Fifty is the limit.", "The limit is two a head.", "Two per customer, max."
    r"|\b(?:is|are) the (?:limit|maximum|max|cap|ceiling)\b|\bthe (?:limit|maximum|cap|"
    r"ceiling) (?:is|stays at) (?:\d|a |an |one|two|three|four|five|six|seven|eight|nine|"
    r"ten|twelve|twenty|thirty|forty|fifty|hundred)|\bmaximum of\b|,\s*(?:max|maximum|"
    r"tops)[.!]?$"
    # an order that makes a choice, opening the sentence or after a short reply ("Drop
    # it and do both nights", "Works for me, go with that", "Keep it at ten")
    r"|^(?:[\w']+(?: [\w']+){0,3}[,.]\s+)?(?:(?:and|so|then|just)\s+)?(?:drop|skip|scrap|ditch|"
    r"cancel|postpone|forget|hold off|hold the|"
    r"keep (?!me\b|us\b|in touch\b|an eye\b|going\b|posted\b)|"
    r"stick with|go with|go for|switch to)\b"
    # a rule set: "No new designs until those are gone", "No more overtime this month"
    r"|^(?:[\w']+[,.]\s+)?(?:(?:then|so|and)\s+)?no (?:new|more|further|extra) \w+"
    # "In that case, no lake swimming this summer.", "a hard cap of sixty", "Not more than
    # a hundred.", "..., full stop.", "once we hit that, we stop taking orders"
    r"|(?:^|[,.]\s+)no (?!problem\b|idea\b|worries\b|way\b|doubt\b|one\b|more\b)[\w-]+"
    r"(?: [\w-]+){0,2} (?:this|next) (?:summer|year|season|term|week|month|winter|spring|"
    r"autumn|weekend)\b"
    r"|\bcap of (?:\d|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|"
    r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|a hundred)"
    r"|\b(?:not|never) more than (?:\d|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"twelve|fifteen|twenty|thirty|forty|fifty|sixty|a hundred)"
    r"|,\s*full stop[.!]?$|\bwe stop (?:taking|selling|doing|offering|running|ordering)\b"
    # an option accepted by name, not by "that": "Sunday works for me.", "Fifteen with
    # the barbecue, fine by me."; a value set by an order: "Make it fifteen."
    r"|^(?:[\w']+[,.]\s+)?(?!(?:that|it|this|which|what|whatever|anything|nothing|"
    r"everything|something|either|neither|any|all|both|who|when)\b)(?:[\w'-]+ ){0,3}"
    r"[\w'-]+ (?:works|suits|is fine|is good|is perfect) (?:for )?(?:me|us|everyone)\b"
    r"|^(?!(?:that|it|this|which|what|whatever|anything|nothing|everything|something|"
    r"either|any|all|both|sure|yes|yeah|no|ok|okay|right|well)\b)(?:[\w'-]+ ){0,4}"
    r"[\w'-]+,\s*(?:fine by me|fine with me|works for me|suits me|agreed)[.!]?(?:$|\s)"
    r"|^(?:[\w']+[,.]\s+)?(?:(?:and|so|then|just)\s+)?make it (?!to\b|up\b|work\b|"
    r"happen\b|quick\b|clear\b|easy\b|through\b)(?:a |an |the )?(?:\d|[\w'-]+\b)"
    # what "we" do, said after an agreement: "Fine, we lease it.", "OK, then we book it."
    r"|^(?:fine|ok|okay|alright|all right|agreed|deal|good|great|yes|yeah)[,.]?\s+"
    rf"(?:then,?\s+)?we {_NOT_PAST}(?!(?:are|is|do|can|go|get|start|begin|move|turn|look|"
    r"talk|discuss|continue|come|see|hear|also|all|both|only|really|meet)\b)[a-z]+\b(?<!ed)"
    # a deal struck: "Let's shake on that.", "You've got a deal.", "It's a deal."
    r"|\bshake on (?:it|that|this)\b|\b(?:it's|that's|it is|that is|you've got|we have|"
    r"we've got) a deal\b"
    r"|^(?:fine|ok|okay|alright|all right|right|good|great|perfect|agreed|yes|yeah)[,.]?\s+"
    r"(?!see\b|talk\b|bye\b|speak\b|until\b|till\b)(?:\w+\s+){1,4}then[.!]?$", re.IGNORECASE)
#: A commitment, an assignment or a request: someone will, can, should or must do
#: something; takes it on ("I'll take", "leave it with me", "I'm on it", "let me"); is
#: doing it ("Tom is handling the contract"); is asked ("can you", "could someone",
#: "please"); or is told, by name ("Omar, book the flights").
_DAYS = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|"
         r"march|april|may|june|july|august|september|october|november|december)\b")
_ACTION = re.compile(
    r"\b(?:I|you|he|she|we|they|someone|somebody|(?-i:(?!(?:It|This|That|There|What|Which|"
    r"Who|Something|Nothing|Everything|Anything)\b)[A-Z][a-z]+))(?: still| really| also| "
    r"definitely)?(?:'ll| will| shall|"
    r" is going to|'s going to| am going to|'m going to| are going to|'re going to| needs? to|"
    r" has to| have to| must(?! have\b)| should(?! have\b))\s+(?!be\b)(?!not\b)(?!say\b)"
    r"(?!see\b)(?!never\b)"
    r"(?!miss\b)\w+"
    r"|\b(?:said|says|promised|offered|volunteered|agreed) (?:(?:he|she|they|I|we)(?: would|'d) |"
    r"to )(?!be\b)\w+"
    # an assignment: "Priya, the invoices are yours.", "Remind me to email the bank."
    r"|\b(?!(?:that|it|this|what|which)\b)\w+(?:'s| is| are|'re) (?:all )?yours\b"
    r"|\bremind me to \w+"
    # a need put to someone named ("Alison, we really need the rota for Easter."), a task
    # given by pointing ("That's you, Tom.", "You're the one who knows the caretaker.")
    r"|^(?:[\w']+,\s+)?(?-i:[A-Z][a-z]+),\s+we (?:really |still |urgently )?need (?:the|a|an|"
    r"some|you to)\b|^(?:that's|that is|that'll be) (?:you|yours),"
    # a duty by name: "Jamie is on drinks.", "You're on the raffle."
    r"|(?:\byou(?:'re| are)|(?-i:\b(?!It\b|That\b|This\b|There\b|What\b|Everything\b|"
    r"Everyone\b|Nobody\b|Which\b|Who\b)[A-Z][a-z]+)(?:'s| is)) on (?!holiday\b|leave\b|"
    r"the phone\b|the way\b|call\b|mute\b|time\b|board\b|it\b|track\b|their\b|his\b|"
    r"her\b|a \w+\b|about\b|fire\b|form\b|top\b|now\b|the (?:agenda|list|table|screen|"
    r"line|left|right)\b)(?:the )?\w+(?:\s+duty)?[.!]?$"
    # a task handed over in the present: "You take the desk.", "Rob, you handle the sound."
    r"|^(?:[\w']+,\s+){0,2}(?:and |so |then )?you (?:take (?!care\b(?! of))|handle|do|sort|"
    r"cover|run|grab|"
    r"bring|book|call|ring|email|send|check|organi[sz]e|look after|deal with|chase|print|"
    r"restock|refill|tidy|clean|empty|pack|load|lock up|update|"
    r"order|collect|pick up|set up|write|draft)\b"
    r"|\b(?:has|have|needs?) to be (?:\w+ ){0,3}?(?:done|ready|finished|sent|paid|booked|"
    r"signed|submitted|in|on|out|up)\b[^.?!]*\b(?:by|before|until|no later than)\b"
    r"|\b(?:is|are) due (?:by|on|before|at|in)\b"
    # a duty with its deadline: "the letters page needs proofreading by noon"
    r"|\bneeds? [a-z]+ing\b[^.?!]*\b(?:by|before|until)\b"
    # a task taken by its thing, in a reply: "Yes, the raffle is mine."
    r"|^(?:yes|yeah|sure|fine|ok|okay|right|no problem)[,.]?\s+(?:[\w'-]+ ){0,3}"
    r"(?!(?:that|it|this|what|which)\b)\w+(?:'s| is| are|'re) (?:all )?mine\b"
    r"|\b(?:I|(?!(?:It|This|That|There|What|Who|Nobody|Everyone|Anyone|Which|Nor|Neither|"
    r"So|Everybody|We|They)\b)"
    r"(?-i:[A-Z][a-z]+)) (?:can|could) (?!not\b)(?!see\b)(?!say\b)(?!hear\b)(?!tell\b)"
    # (what one can remember or imagine is no task)
    r"(?!start\b)(?!be\b)(?!remember\b)(?!imagine\b)(?!think\b)(?!believe\b)"
    r"(?!understand\b)(?!afford\b)(?!only\b)(?!still\b)(?!always\b)(?!never\b)\w+"
    r"|\b(?:I|we) (?:need|want|'d like|would like) (?:you|one of you|someone) to (?!be\b)\w+"
    r"|\b(?:can|could|may) I ask (?:you|one of you|someone) to \w+"
    r"|\b(?:can|could|would|will) (?:you|someone|somebody|anyone|one of you) (?:please |"
    r"also |maybe |just )*\w+|\bplease \w+|\baction item\b"
    r"|\blet me (?!say\b|think\b|see\b|just say\b)\w+"
    r"|\b(?:take care of|follow up|in charge of|responsible for|leave (?:it|that|this|"
    rf"them|the \w+) (?:with|to) (?:me|(?!{_DAYS})(?-i:[A-Z][a-z]+)\b)|"
    r"I(?:'ll| will| can) (?:take|handle|grab|own|cover) "
    r"(?:it|that|this|those|them)|"
    # a task taken over: "Give it to me then.", "I'll take that off your hands."
    r"(?:give|hand|pass) (?:it|that|this|those|them)(?: over)? to me(?=,? (?:then|instead)"
    r"\b|[.!]?$)|"
    r"(?:it|that|this|those|them) off (?:your|his|her|their) hands|"
    r"I(?:'m| am) on (?:it|that|this|the)|I(?:'ve| have) got "
    r"(?:it|that|this)|count me in|sign me up|I(?:'ll)? volunteer|(?:happy|glad) to \w+|"
    r"assign(?:ed)? (?:it |that |this |the \w+ )?to|owns? the)\b"
    r"|\b(?:is|are|'s|'re|am|'m) (?:handling|doing(?! (?:well|fine|great|better|"
    r"okay|ok|alright|badly|worse|much|a lot|really)\b)|taking care of|sorting out|sorting|"
    r"looking into|working on|organi[sz]ing|arranging|preparing|booking|fixing|writing|"
    r"sending|calling|checking|covering|setting up|drafting|ordering|taking)\b",
    re.IGNORECASE)
#: A commitment in the first person ("I'll build it"): an action item even beside words
#: that alone would be small talk ("the page will be up by Friday, I'll build it").
_MINE = re.compile(r"\bI(?:'ll| will) be the one (?:to|who)\b"
                   r"|\bI'll see to\b"
                   # "Ill ask Jo": Whisper's "I'll" without its apostrophe
                   r"|(?-i:\bIll) (?!be\b|see\b|say\b|never\b|not\b)[a-z]+"
                   r"|\bI(?:'ll| will|'m going to| am going to) (?!be\b|see\b|say\b|never\b|"
                   r"not\b|let\b|talk\b|miss\b)\w+", re.IGNORECASE)
#: "I ring the promoter on Monday": a commitment whose "'ll" Whisper dropped (it often
#: does), known by a verb after "I" that is no past, state or auxiliary, and a time ahead.
#: What "I" + a verb in the present is not: a state, a past, an auxiliary, a habit.
_NOT_PLAIN = (r"(?!(?:think|guess|mean|know|hope|see|feel|like|love|agree|wonder|believe|"
              r"suppose|remember|forgot|want|need|was|am|have|had|do|did|can|could|would|"
              r"should|might|must|may|just|really|also|still|never|always|said|went|got|made|"
              r"took|came|saw|rang|sent|told|gave|found|thought|knew|left|met|paid|put|ran|"
              r"bought|brought|spoke|wrote|heard|felt|kept|spent|sat|stood|lost|won|usually|"
              r"often|don't|didn't|can't|won't|wasn't|wanna|gotta|gonna)\b)[a-z]+(?<!ed)\b")
_PLAIN_I = re.compile(
    rf"^(?:(?:and|so|then|ok|okay|right|fine|great|yes|yeah),?\s+)*I {_NOT_PLAIN}[^.?!]*?"
    r"\b(?:tomorrow|tonight|later today|first thing|(?:on|by|before|next|this) (?:monday|"
    r"tuesday|wednesday|thursday|friday|saturday|sunday|week|weekend|month|morning|"
    r"afternoon|evening))\b", re.IGNORECASE)
#: "After service, I bring the supplier...": "I" and a verb in the present, maybe a
#: commitment whose "'ll" Whisper dropped (no time said, so not a cue of its own).
_PLAIN_VERB = re.compile(r"^(?:(?:and|so|then|ok|okay|right|fine|yes|yeah),?\s+|[\w']+(?: [\w']+)?,"
                         rf"\s+){{0,2}}I {_NOT_PLAIN}", re.IGNORECASE)
#: "I leave a note for reception.": a commitment whose "'ll" Whisper dropped, known
#: without a time by an errand's verb and its object, said once (not "every week").
_PLAIN_TASK = re.compile(
    r"^(?:(?:and|so|then|ok|okay|right|fine|sure|yes|yeah),?\s+)*I (?:leave|send|email|ring|"
    r"call|phone|text|book|order|print|draft|chase|collect|post|circulate|put up|set up|"
    r"sort out|pick up|write up)\b (?:a|an|the|everyone|round|out)\b"
    r"(?![^.?!]*\b(?:every|always|usually|normally|often|each|whenever|sometimes|never)\b)",
    re.IGNORECASE)
#: What a sentence with the cues of a commitment may still be: small talk.
_NOT_ACTION = re.compile(r"\b(?:will see|will be|meet again|talk to you|see you|wait and see|"
                         r"thank you|let me know|sometime|some time|one of these days|"
                         r"one day)\b", re.IGNORECASE)
#: A question that is small talk (the weekend, the game) or opens a topic ("shall we").
_SMALL_TALK = re.compile(r"^(?:[\w']+(?: [\w']+){0,3},\s*)?(?:shall we|did (?:you|either of you|"
                         r"any of you|anyone|anybody|everyone)(?: else)? (?:see|watch|catch|hear|"
                         r"notice|read|enjoy|have a good|get (?:caught|soaked|wet|stuck))|"
                         # "Has anyone tasted the jam yet?", "How was the gig last night?"
                         r"has (?:anyone|anybody|everyone)(?: else)? (?:tasted|tried|watched)|"
                         r"how (?:was|were) (?:the|your) [\w' ]+? (?:last night|yesterday|"
                         r"at the weekend|over the weekend)|"
                         r"how (?:was|were) (?-i:[A-Z][a-z]+)(?=\s*\?$)|how (?:was|were) (?:your|"
                         r"his|her|their) [\w' ]+?(?=\s*\?$)|did (?:you|anyone|anybody|"
                         r"everyone)\b[^?]*\b(?:this|last|at the|over the) (?:weekend|night|"
                         r"holiday)(?=\s*\?$)|did your [\w' ]+? (?:win|"
                         r"lose|enjoy|like|go)\b|(?:has |is |are )?(?:everyone|everybody) (?:got "
                         r"(?:a|their|enough)|warm enough|comfortable|settled)\b|"
                         r"how (?:was|were) (?:your|the) (?:weekend|holiday|trip|evening|game|"
                         r"match|flight)|how(?:'s| is| was| were| are) "
                         r"your \w+|how are you|how's it going|how are things)\b",
                         re.IGNORECASE)
#: An aside ("..., by the way?"), a question that only asks the room to confirm what was
#: just said ("Everyone's agreed?"), or one that proposes ("What about the hall instead?",
#: "How about Sunday?", which a reply may agree to): no open question.
_NOT_OPEN = re.compile(
    r",\s*by the way\s*\?$"
    # a shrug: "The plumber comes on Tuesday, but who knows?"
    r"|(?:^|[,;]\s*|\bbut\s+)(?:and\s+)?who (?:knows|can say|can tell)\s*\?$"
    r"|^(?:(?:so|then|and|okay|ok|right|good),?\s+)*(?:are (?:we|you) (?:all )?agreed|(?:is )?"
    r"(?:everyone|everybody|we)(?:'s|'re| is| are)? (?:all )?(?:agreed|happy|okay|ok|fine|good|"
    r"on board|in agreement)(?: with (?:that|this|it))?|all agreed|any objections?)\s*\?$"
    r"|^(?:[^,?]*,\s*)?(?:how about|why don't we|why not|what if we)\b[^,?]*\?$"
    r"|^(?:[\w']+,\s*)?what do (?:you|you both|you all|you two|we|people|others|everyone) "
    r"(?:think|reckon)\b"
    # an offer: "Shall I put the kettle on?"
    r"|^(?:[\w']+,\s*)?shall I\b"
    # ("What about the dishwasher?" opens a topic; with "instead" it proposes)
    r"|^(?:[\w']+,\s*)?what about\b[^,?]*\binstead\s*\?$"
    # a proposal: "What about a loyalty card?", "..., what about getting a van?"
    r"|(?:^|,\s*)what about (?:a|an|some|[a-z]+ing)\b[^?]*\?$"
    r"|\byou (?:also |just )?mentioned\b[^?]*\?$",
    re.IGNORECASE)
#: A point put off ("We'll need to come back to that.", "Let's not decide that tonight."):
#: neither a decision nor a task, unless someone takes it on ("I'll find out").
_DEFER = re.compile(r"\b(?:come back to (?:it|that|this)|let(?:'s| us) not (?:try to |even )?"
                    r"(?:decide|settle|sort|agree|worry about|commit)|let(?:'s| us) see how\b|"
                    r"before we commit\b|keep (?:it|that|this) in mind|(?:I'd|I had|we'd) better "
                    r"(?:get going|go|be off|head off|get back)|"
                    r"(?:leave|keep) (?:it|that|this) (?:open|hanging)|think about it|sleep on it|"
                    r"look (?:at (?:it|that|this) )?again (?:once|when|after|in|next)|"
                    r"park (?:it|that|this|the [\w-]+(?: [\w-]+)?) for now|"
                    # the meeting closed: "let's lock up and go home", "call it a day"
                    r"go home|call it a (?:day|night)|"
                    r"we(?:'ll| will| should| shall| can)? find out)\b", re.IGNORECASE)
#: What the meeting is for, said by "we": "so we need to plan the viewing night" (an
#: agenda, no task of anyone's).
_AGENDA = re.compile(r"\b(?:we (?:need to|have to|'ve got to|got to|should|must|ought to)|"
                     r"I (?:want|wanted|'d like) to) (?:plan|pin down|discuss|talk about|"
                     r"go over|go through|cover|decide|figure out|work out|think about|"
                     r"agree on|settle)\b", re.IGNORECASE)
#: What "we" would have to do, said as a consequence or a condition, or proposed with a
#: hedge: "Otherwise we have to run late.", "If people want more, we should rethink it.",
#: "I think we should cap it at three." (a reason or a proposal, nobody's task).
_WHAT_IF = re.compile(r"^(?:otherwise|or else)\b|^(?:and |but |so )?if\b[^,]*,\s*(?:then\s+)?"
                      r"we(?:'d| would| should| might| could| have to| need to| must)\b"
                      r"|\b(?:I (?:really |honestly |do |still )?(?:think|reckon|guess)|I'd say|"
                      r"maybe|perhaps) we (?:should|"
                      r"could|might|ought to)\b", re.IGNORECASE)
#: A request to someone named, about their own: "Sam, could your team cover Friday?"
_NAMED_ASK = re.compile(r"^(?:[\w']+,\s+)?(?-i:[A-Z][a-z]+),\s+(?:can|could|would|will) your\b",
                        re.IGNORECASE)
#: A question asked as a statement: "what I'm not sure about is whether...", "I wonder
#: if...", "nobody knows who...".
_INDIRECT_Q = re.compile(
    r"\b(?:not sure|unsure|wonder(?:ing)?|(?:don't|do not|doesn't|does not) know|"
    r"(?:anyone|anybody) know|"
    r"(?:nobody|no one)(?: \w+)? (?:knows|answered|decided|said|can answer|can say)|"
    r"(?:nobody|no one)(?: \w+){1,4} (?:tell|told|say|answer) (?:me|us)|"
    r"(?:hasn't|haven't|has not|have not|didn't|did not)(?: yet| still)? (?:said|told (?:us|me)|"
    r"confirmed|decided|answered|replied|got back to us)|(?:asking|asked|wants to know|"
    r"wanted to know)|"
    r"(?:the|an|one) (?:open )?question is|(?:it's|it is) "
    r"(?:unclear|not clear)|(?:we|someone|somebody) (?:need to|needs to|have to|has to|must|"
    r"should|'ve got to) (?:figure out|work out|decide|find out|sort out|agree)|(?:it's|it is) "
    r"(?:unclear|not clear))\b[^.?!]*?\b(?:whether|if|who|what|when|where|how|which)\b",
    re.IGNORECASE)
#: A choice said not to be made yet: "One thing we haven't settled: X or not.", "Nobody
#: has decided the date." (a decision's words, negated: the question is still open).
_UNSETTLED = re.compile(r"\b(?:haven't|have not|hasn't|has not|hadn't|not yet|never|still not)"
                        r"(?: yet| really| actually)? (?:settled|decided|agreed|resolved|sorted "
                        r"out|worked out|made up our minds)\b"
                        r"|\b(?:is|are|remains?|stays?) (?:still open|(?:still )?(?:undecided|"
                        r"unsettled|up in the air|an open question))\b", re.IGNORECASE)
_WH = re.compile(r"^(?:who|what|when|where|why|how|which|whose|do|does|did|is|are|can|"
                 r"could|should|will|would|shall|have|has|any|anyone|is there)\b",
                 re.IGNORECASE)
#: A question that asks someone to do something ("can you check...?") or asks to
#: confirm what was just said (", right?", ", okay?") is filed as what it asks for.
_REQUEST = re.compile(r"^(?:[^?]*?[,;]\s*"
                      # after any clause ("Leave it with me, and are you still happy to...?"),
                      # or a name whose comma Whisper left out ("Kofi can you sort...?")
                      r"|(?:(?!(?:who|what|when|where|why|how|which|whose|do|does|did|is|are|"
                      r"was|were|have|has|and|but|or|if)\b)[\w'-]+\s+){1,3}(?=(?:can|could|"
                      r"would|will) you\b))?(?:and |so |also |then |now )?"
                      r"(?:(?:can|could|may) I ask (?:you|one of you|someone) to\b|"
                      r"(?:can|could) I leave (?:it|that|this|them|the \w+) with\b|"
                      r"(?:can|could|would|will) (?:you|someone|somebody|anyone|one of you)|"
                      # "Owen, you're still alright to sort out the prizes?", "Any chance
                      # you could...?", "Kim, mind sending...?", "fancy taking...?"
                      r"(?:are you|you(?:'re| are)) (?:still )?(?:alright|all right|ok|okay|"
                      r"happy|good|fine) to|any chance (?:you|someone) could|(?:would you |"
                      r"do you )?mind [a-z]+ing|fancy [a-z]+ing|is that something you (?:could|"
                      r"can))"
                      r"\b(?! (?:know|think|believe|remember|say)\b)", re.IGNORECASE)
_TAG = re.compile(r",\s*(?:right|okay|ok|yes|yeah|correct|agreed|alright|all right|"
                  r"is that okay|is that right|isn't it|won't you|can you|will you|"
                  r"don't we|shall we|yes or no)\s*\?$", re.IGNORECASE)
#: An order to someone named, at the start of a sentence: "Omar, book the flights",
#: "And Leo, please set up the tests". The word after the name must be a verb, so the
#: usual first words of any other sentence are excluded, and so is a second name ("Paris,
#: Texas opens the season": an order's verb is not capitalised).
_NAMED = re.compile(r"^(?:(?:and|so|also|then|ok|okay|sure|yes|yeah|fine|right|alright|great|"
                    r"good|well|now),?\s+)*([A-Z][a-z]+),\s+(?:please\s+)?((?-i:[a-z]+))\b"
                    # the verb takes its object: "Characters, inn, tickets" is a list
                    r"(?!\s*(?:[,.;:!?]|$))",
                    re.IGNORECASE)
_NOT_NAME = frozenset((
    "and", "but", "so", "or", "yes", "no", "yeah", "sure", "fine", "okay", "ok", "alright",
    "right", "well", "then", "now", "also", "thanks", "thank", "hi", "hello", "hey",
    "morning", "evening", "afternoon", "good", "great", "nice", "cool", "perfect", "agreed",
    "sorry", "look", "listen", "honestly", "actually", "anyway", "first", "second", "finally",
    "oh", "um", "uh", "lovely", "brilliant", "excellent", "wonderful", "awesome", "exactly",
    "absolutely", "indeed", "true", "same", "anyway", "cheers", "fantastic", "shame", "pity"
))
_NOT_VERB = frozenset((
    "the", "a", "an", "and", "but", "so", "or", "no", "not", "yes", "i", "we", "you", "he",
    "she", "they", "it", "that", "this", "there", "these", "those", "thanks", "thank", "sure",
    "ok", "okay", "well", "let", "what", "who", "how", "why", "when", "where", "which", "is",
    "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "should",
    "shall", "may", "might", "must", "my", "our", "your", "his", "her", "their", "its",
    "just", "also", "then", "now", "see", "talk", "good", "great", "nice", "fine", "as", "in",
    "on", "at", "for", "to", "of", "with", "from", "by", "about", "if", "because", "though",
    "although", "all", "everyone", "everybody", "sorry", "please"
))
#: Words that refer back to what was said before: a commitment made of them ("I'll
#: take that one", "Jenny can do that") carries the sentence before it, which says what.
_REFERS = re.compile(r"\b(?:that|it|this|those|these|them)\b(?!\s+(?:week|weekend|month|year|"
                     r"time|morning|afternoon|evening|quarter|spring|summer|autumn|winter|"
                     r"friday|monday|tuesday|wednesday|thursday|saturday|sunday)\b)"
                     # "Can you get one before six?", "Order another two hundred"
                     r"|\b(?:get|find|order|buy|book|bring|send|grab|need|want|take) (?:one|some|"
                     r"more)\b(?! of\b)|\banother (?:one|couple|few|dozen|\d+|two|three|four|"
                     r"five|six|seven|eight|nine|ten|twenty|fifty|hundred|thousand)\b"
                     # a request of a few words and a tag: "Top it up, would you?"
                     r"|^(?:[\w'-]+[,.]?\s+){0,6}(?:would|will|can|could) you\?$",
                     re.IGNORECASE)


#: A sentence addressed to someone by name: "Nina, you know the supplier."
_ADDRESS = re.compile(r"^(?:[\w']+,\s+)?(?-i:[A-Z][a-z]+),\s+(?:[\w'-]+\s+){0,5}[\w'-]+[.!]$",
                      re.IGNORECASE)


#: A decision said by a marker alone ("No other option.", "Agreed then."): what was decided
#: is the sentence before it.
_BARE = re.compile(r"^(?:[\w']+[,.]?\s+){0,3}[\w']+[.!]?$")


def _named_order(text: str) -> bool:
    m = _NAMED.match(text)
    if (m is not None and m.group(1)[0].isupper() and m.group(1).lower() not in _NOT_NAME
            and m.group(2).lower() not in _NOT_VERB):
        return True
    # the name after the order ("Send me the figures by Friday, Kim."), or an order in
    # the minutes' shape ("Tom to write the minutes.")
    m = _NAMED_LAST.match(text) or _MINUTES.match(text)
    return (m is not None and m.group(1).lower() not in _NOT_NAME
            and not re.fullmatch(_DAYS, m.group(1).lower()))


_TASK_VERBS = (r"send|email|call|ring|phone|text|book|bring|print|order|check|ask|tell|write|"
               r"draft|fix|buy|pick up|sort out|sort|set up|update|finish|prepare|organi[sz]e|"
               r"chase|remind|collect|clean|pay|post|share|circulate|confirm|contact|invite")
_NAMED_LAST = re.compile(rf"^(?:(?:then|so|and|right|okay|ok),?\s+)?(?:please\s+)?"
                         rf"(?:{_TASK_VERBS})\b[^.?!]*,\s*((?-i:[A-Z][a-z]+))"
                         r"(?:[.!]?$|,\s+and\b)", re.IGNORECASE)
_MINUTES = re.compile(rf"^((?-i:[A-Z][a-z]+))(?: and (?-i:[A-Z][a-z]+))? to (?:{_TASK_VERBS})\b",
                      re.IGNORECASE)


#: "What I need is someone to...", "What we want is..." (a need said as a cleft, with
#: the one asked to meet it: not a question, whatever its first word).
_CLEFT_NEED = re.compile(r"^(?:[\w']+,\s+)?what (?:I|we)(?: \w+)? (?:need|want|'d like) is\b"
                         r"(\s+(?:someone|somebody|you|one of you|a volunteer)\b)?",
                         re.IGNORECASE)
#: An order in the imperative, known by its "please" closing it ("Restock the kits before
#: opening day, please.") or by a time clause before it ("And before you go tonight, order
#: more ribbon."): the verb first, an errand's.
_IMPERATIVE = (r"(?:send|email|call|ring|phone|text|book|bring|print|order|check|ask|tell|"
               r"write|draft|fix|buy|sort|set up|update|finish|prepare|chase|remind|collect|"
               r"clean|pay|post|circulate|confirm|contact|invite|get|restock|replace|move|put|"
               r"take|pick up|tidy|renew|arrange|find|hire|return|label|price|pin|hang|empty|"
               r"fill|service|repair|paint|count|lock|unlock|cancel|drop off|ship|pack)")
_ORDER = re.compile(rf"^(?:(?:and|so|then|also|oh)[,.]?\s+)*(?:please\s+)?{_IMPERATIVE}\b"
                    r"[^.?!]*,\s*please[.!]?$"
                    r"|^(?:(?:and|so|then|also|oh)[,.]?\s+)*(?:before|after|when|once|while) "
                    rf"[^,.?!]{{3,40}},\s*(?:please\s+)?{_IMPERATIVE}\b", re.IGNORECASE)


#: A choice of one word: "Sunday it is.", "Blue, it is then." (not "Here it is.").
_ONE_WORD_CHOICE = re.compile(r"^(?!(?:yes|yeah|no|so|well|here|there|where|how|who|why|what|"
                              r"that|this|now|then|and|but|as|whatever)\b)[\w'-]+,? it is"
                              r"(?: then)?[.!]?$", re.IGNORECASE)
#: A request closing a decision's sentence: "Fine, we lease it, Aisha, could you train
#: the nurses?" (one sentence, heard as one: a decision and a task).
_REQUEST_AFTER = re.compile(r"[,.;]\s+((?:[A-Z][a-z]+,\s+)?(?:can|could|would|will) you\b.*"
                            r"|[A-Z][a-z]+,\s+(?:please\s+)?[a-z]+\b.*)$")


def classify(sentence: str) -> str:
    """``decisions``, ``action_items``, ``open_questions`` or ``""`` (none of them)."""
    text = sentence.strip()
    if len(words_in(text)) < 2:
        # "Sunday it is.": a choice of one word
        return "decisions" if _ONE_WORD_CHOICE.match(text) else ""
    if cleft := _CLEFT_NEED.match(text):
        # "What I do need is someone to chase the fees.": a need, asked of the room
        return "action_items" if cleft.group(1) else ""
    if text.endswith("?"):
        if _SMALL_TALK.match(text) or _NOT_OPEN.search(text):
            return ""
        tail = _REQUEST_AFTER.search(text)
        if (_REQUEST.match(text) or (tail and _REQUEST.match(tail.group(1)))
                or _NAMED_ASK.match(text)):
            # (a request closing a longer sentence: "Fine, we rent it, Omar, could you...?")
            return "action_items"
        if not _TAG.search(text):
            return "open_questions"
        text = _TAG.sub(".", text)
    if _INDIRECT_Q.search(text) or _UNSETTLED.search(text):
        return "open_questions"
    put_off = _DEFER.search(text) is not None
    if _DECISION.search(text) and not put_off:
        return "decisions"
    if (_MINE.search(text) or _PLAIN_I.match(text) or _PLAIN_TASK.match(text)
            or _ORDER.match(text)
            or ((_ACTION.search(text) or _named_order(text))
                and not _NOT_ACTION.search(text) and not put_off
                and not _AGENDA.search(text) and not _WHAT_IF.search(text))):
        return "action_items"
    if _WH.match(text) and len(words_in(text)) >= 3 and not text.endswith("!"):
        # Whisper does not always write the question mark of a flat voice
        first, *rest = text.lower().split(maxsplit=2)
        if ((first in {"who", "what", "when", "where", "why", "how", "which", "whose",
                      "anyone", "what's", "who's", "where's", "when's"}
             and not (first == "anyone" and rest[0] in {"who", "that"})
             and not (first == "which" and rest[0] in {"is", "was", "means", "brings"}))
                or text.endswith("?")):  # ("Anyone who is late pays.": a statement)
            return "open_questions"
    return ""


def aside(sentence: str) -> bool:
    """Whether ``sentence`` is no item by its shape: small talk ("Before we start, did
    anyone catch the match?"), a question asking only to confirm, an agenda ("so we need
    to plan the night"), a point put off ("We'll come back to that."), news after "before
    I forget", a story of what happened before ("Last year we used the car park.")."""
    text = sentence.strip()
    if _MINE.search(text) or _named_order(text):
        return False
    return bool(_SMALL_TALK.match(text) or (text.endswith("?") and _NOT_OPEN.search(text))
                or _AGENDA.search(text) or _DEFER.search(text)
                or ((_OPENER.match(text) or _PAST.search(text)) and not classify(text)))


#: What happened before, said with its time: "Last year we used the car park." (a story,
#: no item, unless the sentence says one of its own).
_PAST = re.compile(r"\b(?:last (?:year|week|month|time|night|season|term)|yesterday|"
                   r"(?:a|two|three|a few) (?:days|weeks|months|years) ago)\b", re.IGNORECASE)
#: An aside's opener: "Before I forget, the dog got out again." (news, no item, unless
#: the sentence says one of its own).
_OPENER = re.compile(r"^(?:before (?:we start|we begin|we get going|we get started|I forget)|"
                     r"by the way|on a different note|while I remember)\b", re.IGNORECASE)


#: A proposal, which a reply may agree to: "I'd rather...", "let's...", "how about...".
