// Labelled retrieval set for retrieval-quality tests: 60 short documents on distinct topics
// (with a few deliberate near-duplicate topic pairs) and one query per document.
// Queries are paraphrased, not copied: they share keywords/stems with their document but no 5-word sequence.

export interface LabelledDoc {
  name: string;
  text: string;
}

export interface LabelledQuery {
  query: string;
  relevant: string;
}

export const LABELLED_DOCS: LabelledDoc[] = [
  {
    name: "tides.txt",
    text: "Ocean tides are driven mainly by the gravitational pull of the Moon, with the Sun contributing roughly 46 percent as much force. Most coastlines experience two high waters and two low waters every 24 hours and 50 minutes. When the Sun, Moon and Earth line up at new and full moon, the resulting spring tides have the largest range. Neap tides occur at the quarter moons, when the two pulls partly cancel. The Bay of Fundy in Canada records ranges above 16 metres.",
  },
  {
    name: "sourdough.txt",
    text: "Sourdough bread is leavened by a starter, a fermented mixture of flour and water colonised by wild yeasts and lactic acid bacteria such as Lactobacillus sanfranciscensis. Bakers feed the starter regularly, often at a 1:1:1 ratio of starter, flour and water by weight. The bacteria produce lactic and acetic acids that give the loaf its tangy flavour and help it stay fresh longer. A long cold proof in the refrigerator, often 12 to 18 hours, deepens the sourness and improves the open crumb.",
  },
  {
    name: "rye-bread.txt",
    text: "Rye flour contains little gluten-forming protein, so rye bread relies on pentosans, gum-like carbohydrates that trap gas and hold water. Rye also carries high amylase activity, which can break down starch and leave a gummy crumb unless the dough is acidified. For this reason traditional German Roggenbrot and Danish rugbrod are made with an acidic rye sour. Pumpernickel from Westphalia is baked at low temperature for up to 24 hours in covered tins, which caramelises its sugars and produces a nearly black colour without added colouring.",
  },
  {
    name: "mars.txt",
    text: "Mars is the fourth planet from the Sun and has a thin atmosphere made mostly of carbon dioxide, with a surface pressure under 1 percent of Earth's. Its red colour comes from iron oxide dust covering the ground. Olympus Mons, a shield volcano about 22 kilometres high, is the tallest known volcano in the solar system. Mars has two small, irregular moons, Phobos and Deimos, and a day lasting about 24 hours 37 minutes, called a sol.",
  },
  {
    name: "venus.txt",
    text: "Venus, the second planet from the Sun, is wrapped in a dense carbon dioxide atmosphere with a surface pressure about 92 times that of Earth. A runaway greenhouse effect heats its surface to around 465 degrees Celsius, hotter than Mercury even though Venus is farther from the Sun. Thick clouds of sulphuric acid reflect most sunlight, making it the brightest planet in the night sky. Venus rotates backwards, and one rotation takes 243 Earth days, longer than its 225-day year.",
  },
  {
    name: "rust-lang.txt",
    text: "Rust is a systems programming language first released as version 1.0 in May 2015, originally sponsored by Mozilla. Its ownership model, enforced by the borrow checker at compile time, guarantees memory safety without a garbage collector. Each value has a single owner, and references must not outlive the data they point to. Cargo is the official build tool and package manager, and libraries are called crates and published on crates.io.",
  },
  {
    name: "python-lang.txt",
    text: "Python is a high-level programming language created by Guido van Rossum and first released in 1991. It uses indentation rather than braces to delimit blocks, and its reference implementation, CPython, manages memory with reference counting plus a cycle-detecting garbage collector. The global interpreter lock, or GIL, lets only one thread execute Python bytecode at a time. Third-party packages are distributed through the Python Package Index, known as PyPI, and installed with pip.",
  },
  {
    name: "capital-gains-tax.txt",
    text: "In the United States, capital gains tax applies when an asset such as a stock or property is sold for more than its cost basis. Assets held longer than one year qualify for long-term rates of 0, 15 or 20 percent, depending on taxable income. Gains on assets held one year or less are short-term and taxed at ordinary income rates. Homeowners may exclude up to 250,000 dollars of gain on a main residence, or 500,000 dollars for married couples filing jointly.",
  },
  {
    name: "value-added-tax.txt",
    text: "Value-added tax, or VAT, is a consumption tax collected at each stage of production and distribution on the value added at that stage. Businesses charge VAT on their sales as output tax and reclaim the VAT paid on their purchases as input tax, so the final burden falls on the consumer. The European Union requires member states to set a standard rate of at least 15 percent; Hungary's 27 percent is the highest. France introduced the first modern VAT in 1954, designed by the official Maurice Laure.",
  },
  {
    name: "photosynthesis.txt",
    text: "Photosynthesis converts light energy into chemical energy stored in glucose. In plants it takes place in chloroplasts, where the pigment chlorophyll absorbs mostly red and blue light and reflects green. The light-dependent reactions in the thylakoid membranes split water and release oxygen, while the Calvin cycle in the stroma fixes carbon dioxide using the enzyme RuBisCO. RuBisCO is often cited as the most abundant protein on Earth.",
  },
  {
    name: "roman-aqueducts.txt",
    text: "Roman aqueducts carried water to cities using gravity alone, descending at gentle gradients that were sometimes less than 1 in 4,000. The first, the Aqua Appia, was built in 312 BC by the censor Appius Claudius Caecus. Most of each channel ran underground; the famous arched bridges were used only to cross valleys. By the third century AD, eleven aqueducts supplied Rome. The Pont du Gard in southern France, standing about 49 metres high, is one of the best-preserved examples.",
  },
  {
    name: "magna-carta.txt",
    text: "Magna Carta was sealed by King John of England at Runnymede on 15 June 1215 under pressure from rebel barons. It promised protection of church rights, limits on feudal payments and swift justice. Clause 39 stated that no free man could be imprisoned or stripped of his rights except by the lawful judgement of his peers or the law of the land. Pope Innocent III annulled the charter within months, but it was reissued in 1216, 1217 and 1225. Four original copies of the 1215 text survive.",
  },
  {
    name: "offside-rule.txt",
    text: "In association football, a player is in an offside position if any part of the head, body or feet is nearer to the opponents' goal line than both the ball and the second-last opponent. Being in that position is not itself an offence; the player must become involved in active play. There is no offside offence from a goal kick, throw-in or corner kick. Since 2018 many leagues have used the video assistant referee, or VAR, to review tight offside decisions.",
  },
  {
    name: "marathon.txt",
    text: "The marathon distance of 42.195 kilometres was fixed at the 1908 London Olympics, when the course was extended so it could finish in front of the royal box. The race commemorates the legend of the messenger Pheidippides running from Marathon to Athens. Kenyan runner Kelvin Kiptum set a men's world record of 2:00:35 in Chicago in 2023. Many runners hit the wall near the 30-kilometre mark, when stored muscle glycogen runs low.",
  },
  {
    name: "insulin.txt",
    text: "Insulin is a peptide hormone made by the beta cells of the pancreatic islets of Langerhans. It lowers blood glucose by signalling muscle, liver and fat cells to take up sugar and store it as glycogen or fat. In type 1 diabetes the immune system destroys the beta cells, so patients need injected insulin. Frederick Banting and Charles Best first isolated it in Toronto in 1921, and Leonard Thompson became the first patient treated with it in January 1922.",
  },
  {
    name: "measles.txt",
    text: "Measles is a highly contagious viral disease caused by a morbillivirus, with a basic reproduction number commonly estimated between 12 and 18. Symptoms begin with fever, cough and runny nose, followed by tiny white Koplik spots inside the mouth and then a red rash spreading from the face downward. Two doses of the MMR vaccine, which also protects against mumps and rubella, are about 97 percent effective. Roughly 95 percent coverage is needed to maintain herd immunity.",
  },
  {
    name: "compound-interest.txt",
    text: "Compound interest is earned on both the original principal and the interest already accumulated. The future value of a deposit is P multiplied by (1 + r/n) raised to the power n times t, where r is the annual rate, n the number of compounding periods per year, and t the number of years. The rule of 72 gives a quick estimate of doubling time: divide 72 by the annual percentage rate, so money growing at 8 percent doubles in roughly nine years. Continuous compounding uses the constant e instead.",
  },
  {
    name: "index-funds.txt",
    text: "An index fund is a mutual fund or exchange-traded fund that tracks a market index such as the S&P 500 instead of trying to beat it. John Bogle launched the first index fund for retail investors at Vanguard in 1976. Because no manager picks stocks, expense ratios are low, often below 0.1 percent a year. Studies such as the SPIVA reports show that most actively managed funds underperform their benchmark index over 15-year periods.",
  },
  {
    name: "amazon-river.txt",
    text: "The Amazon River carries more water than any other river, discharging roughly 209,000 cubic metres per second into the Atlantic, about a fifth of all river flow reaching the oceans. Its length, around 6,400 kilometres, is disputed relative to the Nile. No bridge crosses the main stem anywhere along its course. During the wet season the river can swell to more than 40 kilometres wide, flooding the surrounding varzea forest. Its basin is home to the pink river dolphin, or boto.",
  },
  {
    name: "sahara.txt",
    text: "The Sahara is the largest hot desert in the world, covering about 9.2 million square kilometres across North Africa. Only about a quarter of it is sand sea, or erg; much of the rest is rocky plateau called hamada and gravel plains. Between roughly 11,000 and 5,000 years ago, during the African Humid Period, the region was green with lakes and grassland, as rock paintings of cattle and giraffes at Tassili n'Ajjer show. The Harmattan wind blows Saharan dust west toward the Atlantic each winter.",
  },
  {
    name: "sonata-form.txt",
    text: "Sonata form, the standard structure for first movements in the Classical era, has three main sections: exposition, development and recapitulation. The exposition presents a first theme in the tonic key and a second theme usually in the dominant, or in the relative major if the piece is in a minor key. The development fragments and modulates these ideas through distant keys. The recapitulation restates both themes, now both in the tonic. Haydn, Mozart and Beethoven used the form extensively, often adding a coda.",
  },
  {
    name: "equal-temperament.txt",
    text: "Twelve-tone equal temperament divides the octave into twelve semitones, each with a frequency ratio of the twelfth root of two, about 1.05946. This makes every key sound equally in tune, so music can modulate freely, at the cost of slightly impure intervals. An equal-tempered major third is about 14 cents wider than the pure 5:4 ratio of just intonation. Concert pitch today is usually A4 = 440 hertz, standardised by the International Organization for Standardization in 1975.",
  },
  {
    name: "suspension-bridges.txt",
    text: "In a suspension bridge the deck hangs from vertical suspenders attached to main cables, which drape over tall towers and are anchored into massive anchorages at each end. The cables carry loads in tension, allowing very long spans. The Golden Gate Bridge, opened in 1937, has a main span of 1,280 metres. The 1940 collapse of the Tacoma Narrows Bridge, caused by aeroelastic flutter in a 64 kilometre per hour wind, led engineers to test deck designs in wind tunnels. The 1915 Canakkale Bridge in Turkey holds the record span of 2,023 metres.",
  },
  {
    name: "tomatoes.txt",
    text: "Tomatoes are warm-season plants that should be set out only after the last frost, once night temperatures stay above about 10 degrees Celsius. Indeterminate varieties keep growing and fruiting until frost and need staking or cages, while determinate bush types ripen most of their crop over a few weeks. Blossom-end rot, a dark sunken patch on the fruit's base, is caused by calcium deficiency, usually from irregular watering rather than poor soil. Pinching out side shoots, or suckers, directs energy into fruit.",
  },
  {
    name: "composting.txt",
    text: "A hot compost pile works best with a carbon-to-nitrogen ratio of about 30 to 1, mixing brown materials like dry leaves and straw with green materials like grass clippings and vegetable scraps. Thermophilic microbes can heat the centre to 55 to 65 degrees Celsius, killing most weed seeds and pathogens. The pile should be kept as damp as a wrung-out sponge and turned every week or two to supply oxygen. Meat, dairy and pet waste are usually left out because they attract pests and can spread disease.",
  },
  {
    name: "black-holes.txt",
    text: "A black hole is a region where gravity is so strong that nothing, not even light, can escape once it crosses the event horizon. For a non-rotating black hole, the horizon radius is the Schwarzschild radius, about 3 kilometres per solar mass. Stellar black holes form when massive stars collapse at the end of their lives. In 2019 the Event Horizon Telescope released the first image of one, the supermassive black hole in galaxy M87, which has about 6.5 billion solar masses. Stephen Hawking predicted that black holes slowly emit radiation.",
  },
  {
    name: "plate-tectonics.txt",
    text: "Plate tectonics describes Earth's lithosphere as about fifteen major plates moving over the weaker asthenosphere at a few centimetres per year. At divergent boundaries such as the Mid-Atlantic Ridge, new oceanic crust forms; at convergent boundaries, denser oceanic plates sink beneath others in subduction zones. Transform boundaries like the San Andreas Fault slide past each other sideways. Alfred Wegener proposed continental drift in 1912, but the theory was widely accepted only in the 1960s after seafloor spreading was discovered.",
  },
  {
    name: "monarch-butterfly.txt",
    text: "Each autumn, eastern North American monarch butterflies migrate up to 4,000 kilometres to overwintering sites in the oyamel fir forests of central Mexico. No single butterfly completes the round trip; the spring journey north is completed over three to four generations. The migrating generation lives up to eight months, far longer than the summer generations' two to six weeks. Monarch caterpillars feed only on milkweed, whose toxins make the adults distasteful to birds.",
  },
  {
    name: "coffee-roasting.txt",
    text: "Coffee roasting transforms green beans through drying, browning and development stages. Around 196 degrees Celsius the beans reach first crack, an audible popping as steam and carbon dioxide fracture the cell walls; light roasts are usually dropped soon after. Second crack follows near 224 degrees and marks the start of dark roasts, when oils migrate to the surface. The Maillard reaction and caramelisation create hundreds of aroma compounds, while darker roasting reduces perceived acidity.",
  },
  {
    name: "copyright.txt",
    text: "Under the Berne Convention, first signed in 1886, copyright arises automatically when an original work is fixed, without registration. In the United States and the European Union, protection generally lasts for the life of the author plus 70 years. Copyright protects the expression of ideas, not the ideas themselves. In the US, fair use permits limited copying for purposes such as criticism, teaching and parody, judged by four factors including the effect on the market for the original.",
  },
  {
    name: "habeas-corpus.txt",
    text: "A writ of habeas corpus requires a person holding a prisoner to bring the detainee before a court and justify the detention. The English Habeas Corpus Act of 1679 strengthened the remedy against unlawful imprisonment. Article I of the US Constitution forbids suspending the privilege except in cases of rebellion or invasion. Abraham Lincoln suspended it during the Civil War, and in Boumediene v. Bush (2008) the Supreme Court held that Guantanamo detainees could use it.",
  },
  {
    name: "test-cricket.txt",
    text: "Test cricket is the longest format of the game, played between national teams over up to five days with two innings per side. The first Test was contested by Australia and England at the Melbourne Cricket Ground in March 1877. Bowlers deliver six-ball overs, and a red ball is used, except in day-night Tests, which use a pink ball. The Ashes series between England and Australia takes its name from a mock obituary published in 1882. Sir Donald Bradman finished with a Test batting average of 99.94.",
  },
  {
    name: "chess-openings.txt",
    text: "The Sicilian Defence, beginning 1.e4 c5, is the most popular reply to White's king's-pawn opening at master level. It creates an asymmetrical position in which Black often gains counterplay on the queenside. The Queen's Gambit, 1.d4 d5 2.c4, offers a pawn that White can usually regain; declining it with 2...e6 leads to solid positions. Opening theory is catalogued in the Encyclopaedia of Chess Openings, which classifies openings with codes from A00 to E99.",
  },
  {
    name: "git-version-control.txt",
    text: "Git is a distributed version control system created by Linus Torvalds in 2005 to manage Linux kernel development. Each clone holds the full history, with every commit identified by a SHA-1 hash of its content and metadata. Branches are lightweight pointers to commits, which makes branching and merging cheap. A rebase rewrites a branch's commits onto a new base to produce linear history, while a merge preserves both lines with a merge commit.",
  },
  {
    name: "tcp-handshake.txt",
    text: "TCP establishes a connection with a three-way handshake: the client sends a SYN segment, the server replies with SYN-ACK, and the client answers with ACK. Each side picks a random initial sequence number to make spoofing harder. Connections are closed with a FIN exchange, and the side that closes first waits in the TIME_WAIT state for twice the maximum segment lifetime. TCP provides reliable, ordered delivery using acknowledgements and retransmission, and it controls congestion with algorithms like CUBIC.",
  },
  {
    name: "antibiotic-resistance.txt",
    text: "Antibiotic resistance arises when bacteria survive drug exposure through mutations or by acquiring resistance genes from other bacteria on plasmids, a process called horizontal gene transfer. MRSA, methicillin-resistant Staphylococcus aureus, is resistant to most beta-lactam antibiotics. Overuse in medicine and agriculture accelerates selection for resistant strains. A 2022 study in The Lancet estimated that resistant bacterial infections directly caused about 1.27 million deaths worldwide in 2019.",
  },
  {
    name: "sleep-cycles.txt",
    text: "Human sleep cycles through non-REM stages N1, N2 and N3 and rapid eye movement sleep, with each cycle lasting about 90 minutes. Deep slow-wave sleep, stage N3, is concentrated early in the night, while REM periods lengthen toward morning. Most vivid dreaming occurs in REM, when skeletal muscles are nearly paralysed. Adults are generally advised to get seven to nine hours of sleep, and the hormone melatonin, released by the pineal gland in darkness, helps regulate timing.",
  },
  {
    name: "printing-press.txt",
    text: "Johannes Gutenberg developed a movable-type printing press in Mainz around 1440. His system combined metal type cast from a lead-tin-antimony alloy in a hand mould, oil-based ink, and a screw press adapted from wine and olive presses. The Gutenberg Bible, completed around 1455, was printed in about 180 copies, of which 49 are known to survive. By 1500, presses in more than 250 European towns had produced an estimated 20 million volumes.",
  },
  {
    name: "silk-road.txt",
    text: "The Silk Road was a network of overland trade routes linking China with Central Asia, Persia and the Mediterranean from about the second century BC. The Han dynasty envoy Zhang Qian's missions to the west around 138 BC helped open it. Besides silk, merchants carried spices, glass, horses and paper, and ideas such as Buddhism spread along the routes. Cities like Samarkand and Kashgar grew rich as caravan hubs. The term Seidenstrasse was coined by the German geographer Ferdinand von Richthofen in 1877.",
  },
  {
    name: "beekeeping.txt",
    text: "A honey bee colony contains a single queen, tens of thousands of female workers and, in summer, a few hundred male drones. The queen can lay up to 2,000 eggs a day. Workers communicate the direction and distance of food using the waggle dance, decoded by Karl von Frisch, who shared the 1973 Nobel Prize. Beekeepers use Langstroth hives with movable frames spaced by a bee space of about 8 millimetres. The parasitic Varroa mite is the most serious threat to managed colonies.",
  },
  {
    name: "glaciers.txt",
    text: "A glacier forms where snow accumulates faster than it melts, compacting over decades into firn and then dense glacial ice. Glaciers flow under their own weight by internal deformation and by sliding on meltwater at their beds. As they move, they carve U-shaped valleys, cirques and fjords and deposit ridges of debris called moraines. Glacial ice looks blue because it absorbs red light. Together, glaciers and ice sheets hold about 69 percent of the world's fresh water.",
  },
  {
    name: "lithium-ion-batteries.txt",
    text: "A lithium-ion battery stores energy by shuttling lithium ions between a graphite anode and a metal oxide cathode through an electrolyte. Common cathode chemistries include lithium cobalt oxide, used in phones, and lithium iron phosphate, or LFP, which is cheaper and more thermally stable. A typical cell has a nominal voltage of 3.6 to 3.7 volts. Overcharging or internal short circuits can trigger thermal runaway. The 2019 Nobel Prize in Chemistry went to John Goodenough, Stanley Whittingham and Akira Yoshino for its development.",
  },
  {
    name: "jet-engines.txt",
    text: "A turbofan jet engine draws air through a large front fan; most of it bypasses the core, while the rest is compressed, mixed with fuel and burned in the combustor. The hot gas spins turbines that drive the fan and compressor before exiting through the nozzle. Modern airliner engines have bypass ratios above 10 to 1, which improves fuel efficiency and reduces noise. Frank Whittle in Britain and Hans von Ohain in Germany independently developed the first jet engines in the late 1930s.",
  },
  {
    name: "origami.txt",
    text: "Origami is the Japanese art of folding paper, traditionally from a single square sheet without cuts or glue. The crane, or orizuru, is its best-known model, and folding a thousand cranes, senbazuru, is said to grant a wish. Akira Yoshizawa, who died in 2005, created tens of thousands of models and developed the diagramming notation still used today. Mathematical origami has produced the Miura fold, used to pack solar panel arrays for satellites.",
  },
  {
    name: "winemaking.txt",
    text: "In winemaking, yeast, usually Saccharomyces cerevisiae, converts grape sugars into ethanol and carbon dioxide during alcoholic fermentation. Red wines are fermented with their skins to extract colour and tannins, while white wines are usually pressed first. Many reds and some whites then undergo malolactic fermentation, in which bacteria convert sharp malic acid into softer lactic acid. Fermentation temperatures are often kept around 25 to 30 degrees for reds and 12 to 18 degrees for whites.",
  },
  {
    name: "sushi-rice.txt",
    text: "Sushi rice, or shari, is made from short-grain Japonica rice, which is stickier than long-grain varieties because of its higher amylopectin content. The rice is rinsed until the water runs clear, cooked with slightly less water than usual, and then seasoned while warm with a mixture of rice vinegar, sugar and salt called sushi-zu. Cooks fold the seasoning in with a wooden paddle in a shallow cedar tub, a hangiri, while fanning to cool the rice and give it a glossy sheen.",
  },
  {
    name: "solar-eclipses.txt",
    text: "A total solar eclipse happens when the Moon passes directly between the Sun and Earth and completely covers the solar disc. This is possible because the Sun is about 400 times wider than the Moon but also about 400 times farther away. Totality is visible only along a narrow path, at most about 270 kilometres wide, and lasts no more than about 7.5 minutes. During totality observers can see the Sun's corona. Eclipses recur in families separated by the saros cycle of about 18 years and 11 days.",
  },
  {
    name: "halleys-comet.txt",
    text: "Halley's Comet returns to the inner solar system roughly every 75 to 76 years. Edmond Halley used Newton's laws to show that comets seen in 1531, 1607 and 1682 were the same object and predicted its return in 1758, which he did not live to see. Its nucleus, imaged by the European probe Giotto in 1986, is about 15 kilometres long and darker than coal. Debris shed by the comet produces the Eta Aquariid meteor shower in May and the Orionids in October. Its next perihelion is expected in 2061.",
  },
  {
    name: "dna-replication.txt",
    text: "DNA replication is semiconservative: each new double helix contains one original strand and one newly made strand, as shown by Meselson and Stahl in 1958. Helicase unwinds the helix at the replication fork, and DNA polymerase adds nucleotides only in the 5' to 3' direction. The leading strand is synthesised continuously, while the lagging strand is made in short Okazaki fragments that DNA ligase later joins. Human cells copy about 3 billion base pairs each time they divide.",
  },
  {
    name: "blood-types.txt",
    text: "The ABO blood group system, discovered by Karl Landsteiner in 1901, classifies blood by A and B antigens on red cells. Combined with the Rh factor, it gives eight common types. Type O negative red cells lack A, B and RhD antigens and can be given to almost any patient in an emergency, which is why O negative donors are called universal donors. Type AB positive people are universal recipients of red cells. Mismatched transfusions can cause a dangerous haemolytic reaction.",
  },
  {
    name: "inflation-cpi.txt",
    text: "The consumer price index measures the average change in prices paid by households for a fixed basket of goods and services. Inflation is usually reported as the percentage change in the CPI over twelve months. Many central banks, including the European Central Bank and the Federal Reserve, target inflation of about 2 percent. Core inflation excludes volatile food and energy prices. Hyperinflation is often defined as monthly inflation above 50 percent, as in Zimbabwe in 2008.",
  },
  {
    name: "mortgage-amortization.txt",
    text: "A fixed-rate mortgage is repaid through an amortization schedule in which each monthly payment stays the same, but the split between interest and principal changes. Early payments go mostly to interest, because interest is charged on the large outstanding balance; later payments mostly reduce principal. On a 300,000 dollar, 30-year loan at 6 percent, the monthly payment is about 1,799 dollars, and total interest exceeds 347,000 dollars. Making extra principal payments shortens the term and cuts total interest.",
  },
  {
    name: "mount-everest.txt",
    text: "Mount Everest, on the border between Nepal and the Tibet region of China, is the highest mountain above sea level at 8,848.86 metres, a figure announced jointly by the two countries in 2020. Edmund Hillary and Tenzing Norgay made the first confirmed ascent on 29 May 1953 via the South Col route. Above about 8,000 metres lies the death zone, where oxygen is too scarce to sustain life for long. Sherpa climber Kami Rita has summited more than 25 times.",
  },
  {
    name: "coral-reefs.txt",
    text: "Reef-building corals are colonies of tiny polyps that secrete calcium carbonate skeletons. They live in symbiosis with single-celled algae called zooxanthellae, which photosynthesise and supply up to 90 percent of the coral's energy. When water stays about 1 degree Celsius above the normal summer maximum for weeks, corals expel the algae and turn white, a process known as bleaching. The Great Barrier Reef off Queensland stretches about 2,300 kilometres and suffered mass bleaching in 2016, 2017 and 2020.",
  },
  {
    name: "bebop-jazz.txt",
    text: "Bebop emerged in New York in the early 1940s, developed by musicians such as Charlie Parker, Dizzy Gillespie and Thelonious Monk at clubs like Minton's Playhouse. Compared with swing, it used faster tempos, complex chord substitutions and virtuosic improvisation aimed at listening rather than dancing. Bebop melodies were often written over the chord changes of existing songs; George Gershwin's I Got Rhythm supplied the progression known as rhythm changes. The flattened fifth became a signature sound of the style.",
  },
  {
    name: "ancient-olympics.txt",
    text: "The ancient Olympic Games were held at Olympia in honour of Zeus, traditionally from 776 BC, every four years. The earliest event was the stadion, a footrace of about 192 metres. Later additions included wrestling, boxing, chariot racing and the pankration, a brutal mix of boxing and wrestling. Winners received olive wreaths rather than money. Married women were barred from watching, and the games ended in the late fourth century AD, often dated to a decree of Emperor Theodosius I in 393.",
  },
  {
    name: "bonsai.txt",
    text: "Bonsai is the Japanese practice of growing miniature trees in shallow containers, derived from the Chinese art of penjing. Growers shape trees by pruning branches and roots and by wrapping copper or aluminium wire around branches for several months to set their position. Common species include Japanese black pine, Chinese elm and trident maple. Trees are repotted every two to five years, with roots trimmed to keep them compact. A Japanese white pine at the US National Arboretum has been in training since 1625.",
  },
  {
    name: "earthquake-magnitude.txt",
    text: "Earthquake magnitude is now usually reported on the moment magnitude scale, which replaced the Richter scale devised by Charles Richter in 1935 for southern California. Each whole-number step represents about 32 times more energy released. The largest recorded earthquake, the 1960 Valdivia earthquake in Chile, measured 9.5. Seismographs detect fast primary P waves first, followed by slower secondary S waves, and the delay between them tells how far away the epicentre is.",
  },
  {
    name: "french-revolution.txt",
    text: "The French Revolution began in 1789 when financial crisis forced Louis XVI to summon the Estates-General for the first time since 1614. On 14 July 1789 crowds stormed the Bastille fortress in Paris, and in August the National Assembly adopted the Declaration of the Rights of Man and of the Citizen. The monarchy was abolished in September 1792, and Louis was executed in January 1793. The Reign of Terror under Robespierre followed, ending with his own execution in July 1794.",
  },
  {
    name: "concrete.txt",
    text: "Concrete is a mixture of Portland cement, water, sand and gravel aggregate that hardens through hydration, a chemical reaction between cement and water rather than drying. The water-to-cement ratio strongly affects strength: lower ratios, around 0.4, give stronger and less permeable concrete. Standard tests measure compressive strength after 28 days of curing. Because concrete is weak in tension, it is reinforced with steel bars, or rebar. The Romans built the Pantheon dome from unreinforced concrete containing volcanic ash.",
  },
];

export const LABELLED_QUERIES: LabelledQuery[] = [
  { query: "why do spring tides have a bigger range than neap tides", relevant: "tides.txt" },
  { query: "which lactobacillus species makes sourdough tangy and how long to cold proof it", relevant: "sourdough.txt" },
  { query: "why pumpernickel rye loaves come out almost black after slow baking", relevant: "rye-bread.txt" },
  { query: "how high is Olympus Mons and what are the Martian moons called", relevant: "mars.txt" },
  { query: "why is Venus hotter than Mercury despite being further away", relevant: "venus.txt" },
  { query: "language where a borrow checker enforces ownership instead of garbage collection", relevant: "rust-lang.txt" },
  { query: "does the global interpreter lock stop threads running bytecode in parallel", relevant: "python-lang.txt" },
  { query: "how long must I hold shares to get the lower long-term capital gains rate", relevant: "capital-gains-tax.txt" },
  { query: "can a business reclaim input VAT on what it purchases", relevant: "value-added-tax.txt" },
  { query: "which enzyme fixes CO2 during the Calvin cycle in chloroplasts", relevant: "photosynthesis.txt" },
  { query: "when was the first aqueduct for Rome built and by whom", relevant: "roman-aqueducts.txt" },
  { query: "which king sealed the great charter at Runnymede in 1215", relevant: "magna-carta.txt" },
  { query: "can you be offside straight from a throw-in or a corner", relevant: "offside-rule.txt" },
  { query: "how did the 1908 Olympics settle the marathon length of 42.195 km", relevant: "marathon.txt" },
  { query: "who isolated insulin in Toronto and when was it first given to a patient", relevant: "insulin.txt" },
  { query: "what vaccination coverage is required for measles herd immunity", relevant: "measles.txt" },
  { query: "rule of 72 for estimating when savings will double", relevant: "compound-interest.txt" },
  { query: "who started the first retail index fund and do active managers beat their benchmark", relevant: "index-funds.txt" },
  { query: "how much water does the Amazon discharge each second", relevant: "amazon-river.txt" },
  { query: "when was the Sahara green and covered in lakes", relevant: "sahara.txt" },
  { query: "in sonata structure, what key does the second theme return in during the recapitulation", relevant: "sonata-form.txt" },
  { query: "how many cents sharp is a major third in equal temperament compared with just intonation", relevant: "equal-temperament.txt" },
  { query: "what made the Tacoma Narrows bridge collapse in 1940", relevant: "suspension-bridges.txt" },
  { query: "black spot at the bottom of my tomato fruit - is it a calcium problem", relevant: "tomatoes.txt" },
  { query: "ideal ratio of browns to greens in a compost heap", relevant: "composting.txt" },
  { query: "size of the Schwarzschild radius per solar mass", relevant: "black-holes.txt" },
  { query: "who first proposed continental drift, and when did geologists accept it", relevant: "plate-tectonics.txt" },
  { query: "how many generations does the monarch migration take and where do they spend winter", relevant: "monarch-butterfly.txt" },
  { query: "at what temperature does first crack happen when roasting coffee beans", relevant: "coffee-roasting.txt" },
  { query: "how many years after the author dies does copyright protection last", relevant: "copyright.txt" },
  { query: "when can the US suspend habeas corpus under the Constitution", relevant: "habeas-corpus.txt" },
  { query: "Don Bradman's career batting average in Tests", relevant: "test-cricket.txt" },
  { query: "most played Black response to 1.e4 among chess masters", relevant: "chess-openings.txt" },
  { query: "difference between rebasing and merging a branch in Git", relevant: "git-version-control.txt" },
  { query: "steps of the TCP three-way handshake with SYN and ACK", relevant: "tcp-handshake.txt" },
  { query: "how do bacteria pick up resistance genes via plasmids", relevant: "antibiotic-resistance.txt" },
  { query: "how long does one REM and non-REM sleep cycle last", relevant: "sleep-cycles.txt" },
  { query: "what metal alloy did Gutenberg cast his type from", relevant: "printing-press.txt" },
  { query: "which Han envoy helped open the Silk Road trade routes to the west", relevant: "silk-road.txt" },
  { query: "what does the waggle dance tell other bees about food", relevant: "beekeeping.txt" },
  { query: "why does glacier ice appear blue", relevant: "glaciers.txt" },
  { query: "is LFP cathode chemistry safer than cobalt oxide in lithium cells", relevant: "lithium-ion-batteries.txt" },
  { query: "what does bypass ratio mean on a turbofan", relevant: "jet-engines.txt" },
  { query: "who invented the diagram notation used for paper folding instructions", relevant: "origami.txt" },
  { query: "what does malolactic fermentation do to the acid in wine", relevant: "winemaking.txt" },
  { query: "what goes into the vinegar seasoning for sushi rice, and why use short-grain", relevant: "sushi-rice.txt" },
  { query: "what is the longest possible duration of totality in a solar eclipse", relevant: "solar-eclipses.txt" },
  { query: "which meteor showers come from Halley's comet debris", relevant: "halleys-comet.txt" },
  { query: "why is the lagging strand built from Okazaki fragments", relevant: "dna-replication.txt" },
  { query: "which blood type is the universal donor for red cell transfusions", relevant: "blood-types.txt" },
  { query: "why does core inflation leave out food and energy", relevant: "inflation-cpi.txt" },
  { query: "why do early mortgage payments mostly cover interest", relevant: "mortgage-amortization.txt" },
  { query: "who first reached the summit of Everest and by which route", relevant: "mount-everest.txt" },
  { query: "what causes coral bleaching in warm water", relevant: "coral-reefs.txt" },
  { query: "which Gershwin tune gave jazz players the rhythm changes progression", relevant: "bebop-jazz.txt" },
  { query: "what prize did winners get at the Olympia games in ancient Greece", relevant: "ancient-olympics.txt" },
  { query: "how often should a bonsai tree be repotted and its roots trimmed", relevant: "bonsai.txt" },
  { query: "how much more energy is released for each step up in quake magnitude", relevant: "earthquake-magnitude.txt" },
  { query: "when was the Bastille stormed and the monarchy abolished", relevant: "french-revolution.txt" },
  { query: "how does the water cement ratio affect concrete strength", relevant: "concrete.txt" },
];
