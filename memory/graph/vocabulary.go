package graph

// The linker's vocabulary: every word list it consults is a table here, so that extending
// what it knows is a data change, not a code change. Entries are written as people type
// them; the lookup tables built from them (tables.go) fold case and diacritics.

// nicknames lists, per person name, its spelling variants and nicknames. The first name of
// each group is the canonical name the entity carries; every other name of the group is an
// alias. A name belongs to one group only (the first that lists it), so an ambiguous
// nickname is listed where it is most common.
var nicknames = [][]string{
	{"Katherine", "Kathryn", "Catherine", "Katharine", "Kathrine", "Kate", "Katie", "Katy", "Kat", "Kathy", "Cathy", "Kitty"},
	{"Ekaterina", "Yekaterina", "Katya", "Katia", "Katja"},
	{"William", "Will", "Bill", "Billy", "Willy", "Liam"},
	{"Alexander", "Alex", "Alec", "Xander", "Sasha", "Aleksandr", "Alexandre"},
	{"Alexandra", "Lexi", "Sandra"},
	{"Robert", "Rob", "Bob", "Bobby", "Robbie", "Bert"},
	{"Elizabeth", "Elisabeth", "Liz", "Beth", "Betty", "Lizzie", "Eliza", "Libby", "Betsy"},
	{"Margaret", "Maggie", "Meg", "Peggy", "Marge", "Greta"},
	{"James", "Jim", "Jimmy", "Jamie"},
	{"Michael", "Mike", "Mikey", "Mick", "Micheal"},
	{"Jonathan", "Jon", "Jonny", "Johnathan"},
	{"John", "Johnny", "Jack"},
	{"Christopher", "Chris", "Topher", "Kit"},
	{"Nicholas", "Nick", "Nicky", "Nico", "Nicolas"},
	{"Daniel", "Dan", "Danny"},
	{"Matthew", "Matt", "Matty"},
	{"Joseph", "Joe", "Joey"},
	{"Benjamin", "Ben", "Benny"},
	{"Samuel", "Sam", "Sammy"},
	{"Thomas", "Tom", "Tommy"},
	{"Richard", "Rick", "Rich", "Ricky", "Dick"},
	{"Edward", "Ed", "Eddie", "Ted", "Ned"},
	{"Andrew", "Andy", "Drew"},
	{"Anthony", "Tony", "Antony"},
	{"Stephen", "Steven", "Steve", "Stevie"},
	{"Jennifer", "Jen", "Jenny"},
	{"Rebecca", "Becca", "Becky"},
	{"Victoria", "Vicky", "Tori"},
	{"Patricia", "Pat", "Patty", "Trish"},
	{"Susan", "Sue", "Suzy", "Susie"},
	{"Deborah", "Debbie", "Deb", "Debra"},
	{"Charles", "Charlie", "Chuck"},
	{"Theodore", "Theo", "Teddy"},
	{"Timothy", "Tim", "Timmy"},
	{"Gregory", "Greg"},
	{"Joshua", "Josh"},
	{"Zachary", "Zach", "Zack", "Zak"},
	{"Abigail", "Abby", "Abbie"},
	{"Jessica", "Jess", "Jessie"},
	{"Kimberly", "Kim", "Kimberley"},
	{"Natalie", "Nat", "Nathalie"},
	{"Olivia", "Liv", "Livvy"},
	{"Isabella", "Bella", "Izzy", "Isabel", "Isabelle"},
	{"Gabriel", "Gabe"},
	{"Nathaniel", "Nate", "Nathan"},
	{"Frederick", "Fred", "Freddie", "Freddy"},
	{"Lawrence", "Larry", "Laurence"},
	{"Leonard", "Leo", "Len", "Lenny"},
	{"Peter", "Pete"},
	{"Philip", "Phillip", "Phil"},
	{"Raymond", "Ray"},
	{"Ronald", "Ron", "Ronnie"},
	{"Donald", "Don", "Donnie"},
	{"Douglas", "Doug"},
	{"Kenneth", "Ken", "Kenny"},
	{"Eleanor", "Ellie", "Elinor", "Nora"},
	{"Dorothy", "Dot", "Dottie"},
	{"Sarah", "Sara", "Sally"},
	{"Hannah", "Hanna"},
	{"Jacob", "Jake"},
	{"Maximilian", "Max"},
	{"Sophia", "Sophie", "Sofia"},
	{"Caroline", "Carol", "Carolyn", "Carrie"},
	{"Valentina", "Val", "Vale"},
	{"Mohammed", "Muhammad", "Mohammad", "Mo"},
	{"Yuki", "Yukki"},
	{"Takeshi", "Take"},
	{"Kenji", "Ken-chan"},
}

// firstNames are common given names beyond the nickname groups (which count too): a
// capitalised word among them is taken for a person, also at the start of a sentence.
var firstNames = []string{
	"Aaron", "Adam", "Adrian", "Aiden", "Alan", "Albert", "Alice", "Amelia", "Amy", "Ana", "Anna", "Andrea", "Angela",
	"Arthur", "Ava", "Barbara", "Bruno", "Carlos", "Chloe", "Claire", "Clara", "Daisy", "Dave", "David", "Diana",
	"Diego", "Dylan", "Elena", "Elias", "Ella", "Emily", "Emma", "Eric", "Erik", "Ethan", "Eva", "Evan", "Felix",
	"Fiona", "Frank", "George", "Grace", "Harry", "Heidi", "Henry", "Hugo", "Ian", "Ivan", "Jade", "Jasmine",
	"Jason", "Jenna", "Jordan", "Jose", "Juan", "Julia", "Julian", "Justin", "Karen", "Karl", "Kevin", "Kyle",
	"Laura", "Leah", "Lena", "Lily", "Linda", "Lisa", "Logan", "Lucas", "Lucy", "Luis", "Luka", "Luna", "Marco",
	"Maria", "Marie", "Mark", "Martin", "Mary", "Mateo", "Mia", "Miguel", "Mila", "Nadia", "Nina", "Noah", "Noel",
	"Oliver", "Omar", "Oscar", "Owen", "Paul", "Paula", "Pedro", "Priya", "Quinn", "Rachel", "Raj", "Rosa",
	"Ruby", "Ryan", "Sean", "Simon", "Sofie", "Stella", "Tara", "Tyler", "Uma", "Vera", "Victor", "Wendy", "Yara",
	"Zoe", "Zoë", "Zara", "Carl", "Nils", "Lars", "Ingrid", "Astrid", "Sven", "Pierre", "Jean", "Louis", "Chiara",
	"Giulia", "Luca", "Matteo", "Aisha", "Fatima", "Ali", "Hassan", "Arjun", "Ananya", "Wei", "Mei", "Jun", "Min",
	"Hiro", "Hiroshi", "Haruto", "Haruka", "Sakura", "Aoi", "Ren", "Sota", "Yuto", "Hina", "Riko", "Yui", "Kaito",
	"Daiki", "Shota", "Taro", "Akira", "Aiko", "Emi", "Kenta", "Naoki", "Yuka", "Yuna", "Misaki", "Nanami",
	"Ryo", "Tomo", "Kana", "Mika", "Saki", "Rin", "Sora", "Mio", "Minji", "Jisoo", "Hyun", "Katia", "Katya",
	"Dmitri", "Olga", "Natasha", "Igor", "Pavel", "Yusuf", "Elif", "Mehmet", "Ines", "Lea", "Jonas", "Finn",
}

// honorificsEN are titles before a person's name ("Dr Tanaka", "Ms. Park").
var honorificsEN = []string{"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "madam", "uncle", "aunt", "auntie", "grandma", "grandpa", "coach", "captain"}

// stopCaps are capitalised words that are not names: function words, pronouns, greetings,
// days and months, words that start chat sentences, and acronyms of chat and computing. A
// capitalised run starting or made of them is not an entity.
var stopCaps = []string{
	// articles, pronouns, determiners, conjunctions, prepositions
	"a", "an", "the", "i", "im", "i'm", "i'd", "i'll", "i've", "me", "my", "mine", "we", "we're", "we'll", "we've", "we'd",
	"us", "our", "ours", "you", "you're", "you'll", "your", "yours", "he", "he's", "him", "his", "she", "she's", "her",
	"hers", "it", "it's", "its", "they", "they're", "they'll", "them", "their", "this", "that", "these", "those",
	"there", "there's", "here", "here's", "what", "what's", "which", "who", "who's", "whom", "whose", "when", "where",
	"why", "how", "and", "or", "but", "so", "if", "then", "than", "because", "since", "while", "though", "although",
	"also", "just", "only", "even", "still", "yet", "not", "no", "yes", "yeah", "yep", "nope", "nah", "ok", "okay",
	"oh", "ah", "uh", "um", "hmm", "wow", "lol", "lmao", "omg", "btw", "tbh", "imo", "fyi", "asap", "idk", "afaik",
	"hey", "hi", "hello", "bye", "thanks", "thank", "thx", "ty", "please", "pls", "sorry", "congrats", "welcome",
	"of", "in", "on", "at", "to", "for", "from", "with", "by", "about", "as", "into", "onto", "over", "under",
	"after", "before", "during", "until", "till", "all", "any", "some", "every", "each", "both", "either", "neither",
	"none", "nobody", "everyone", "everybody", "someone", "somebody", "anyone", "anybody", "nothing", "everything",
	"something", "anything", "many", "much", "more", "most", "few", "less", "least", "other", "another", "such",
	"same", "own", "very", "too", "really", "maybe", "perhaps", "probably", "definitely", "actually", "basically",
	"honestly", "seriously", "literally", "anyway", "anyways", "well", "now", "today", "tonight", "tomorrow",
	"yesterday", "soon", "later", "always", "never", "sometimes", "often", "usually", "again", "once", "first",
	"second", "third", "last", "next", "new", "old", "good", "great", "nice", "cool", "fine", "sure", "true",
	"false", "right", "left", "wait", "note", "update", "edit", "ps", "re", "fwiw", "gg", "wp", "gl", "hf", "afk",
	"brb", "irl", "lfg", "til", "eod", "eta", "wfh", "ooo", "ama", "nsfw", "tl;dr", "tldr", "dm", "dms", "pm",
	"am", "pr", "prs", "mr", "api", "apis", "url", "urls", "id", "ids", "ui", "ux", "qa", "ci", "cd", "db", "os",
	"pc", "tv", "gpu", "cpu", "ram", "ssd", "hdd", "usb", "pdf", "csv", "json", "yaml", "html", "css", "http",
	"https", "sql", "faq", "lan", "wifi", "vpn", "ssh", "ai", "ml", "llm", "ip", "dns", "cli", "gui", "ide", "sdk", "dlc", "npc", "pve", "pvp", "rpg", "mmo", "fyi", "vc", "voice", "fps", "hp", "xp", "mvp", "rn", "nvm", "np", "ikr", "smh", "jk", "ily",
	"do", "does", "did", "don't", "doesn't", "didn't", "is", "isn't", "are", "aren't", "was", "wasn't", "were",
	"be", "been", "being", "have", "has", "had", "can", "can't", "could", "couldn't", "will", "won't", "would",
	"wouldn't", "should", "shouldn't", "may", "might", "must", "shall", "let", "let's", "lets", "gonna", "wanna",
	"gotta", "remember", "remind", "reminder", "don", "note", "notes", "todo", "fixme", "done", "doing",
	"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mondays", "tuesdays",
	"wednesdays", "thursdays", "fridays", "saturdays", "sundays", "weekends", "mon", "tue", "tues", "wed",
	"thu", "thur", "thurs", "fri", "sat", "sun", "january", "february", "march", "april", "june", "july",
	"august", "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
	"sep", "sept", "oct", "nov", "dec", "morning", "evening", "night", "noon", "weekend", "weekday", "week",
	"month", "year", "everyone's", "christmas", "xmas", "halloween", "easter", "new year", "happy", "merry",
	"utc", "jst", "est", "pst", "cet", "gmt", "bst", "edt", "pdt",
}

// softStops are stop words that may still sit inside a name after its first word ("Blue
// Note", "Ghost of Tsushima Director's Cut").
var softStops = []string{"note", "notes", "new", "old", "great", "good", "first", "last", "next", "update", "edit",
	"night", "morning", "week", "weekend", "year", "day", "days", "one", "two", "three", "all", "more", "home", "here"}

// switchVerbs before "from" make it the start of a change ("migrating from Heroku to
// Fly.io"), not a place ("Ivan from Kyiv").
var switchVerbs = []string{"switch", "switched", "switching", "migrate", "migrated", "migrating", "moving",
	"upgrade", "upgraded", "upgrading", "port", "ported", "porting", "convert", "converted", "converting", "away"}

// sentenceStarters are capitalised words that often start a chat sentence before a name
// ("Ask Kate", "Tell Bob", "Meet Yuki"): at a sentence start they are dropped from a run.
var sentenceStarters = []string{
	"ask", "tell", "ping", "meet", "call", "invite", "thank", "thanks", "congrats", "remind", "message", "text",
	"email", "poke", "cc", "pls", "please", "welcome", "blame", "help", "bring", "tag", "dear", "hey", "hi",
	"hello", "morning", "yo", "sup", "when", "where", "does", "did", "is", "was", "has", "can", "should",
	"would", "will", "maybe", "apparently", "honestly", "also", "so", "and", "but", "then", "btw", "ok",
	"okay", "lol", "oh", "congratulations", "happy", "play", "playing", "watch", "watching", "read", "reading",
	"finished", "started", "visit", "visiting", "moving", "moved", "going", "went", "heading", "back",
	"got", "new", "like", "love", "loved", "try", "tried", "use", "using", "switch", "switched", "started",
}

// Cue words around a capitalised run that say what kind of thing it names. Single words
// before (…Before) or after (…After) the run; phrases are matched word by word.
var (
	// personBefore: "with Kate", "ask Bob", "thanks Yuki".
	personBefore = []string{"with", "ask", "asked", "tell", "told", "thanks", "thank", "ping", "pinged", "cc",
		"meet", "met", "call", "called", "invite", "invited", "remind", "dm", "dmed", "message", "messaged",
		"text", "texted", "blame", "per", "sister", "brother", "mom", "mum", "dad", "wife", "husband",
		"girlfriend", "boyfriend", "partner", "friend", "cousin", "coworker", "colleague", "boss", "manager",
		"roommate", "son", "daughter", "uncle", "aunt"}
	// personAfter: "Kate said", "Bob thinks", "Yuki and I".
	personAfter = []string{"said", "says", "thinks", "think", "thought", "wants", "wanted", "asked", "told",
		"mentioned", "prefers", "preferred", "likes", "liked", "loves", "loved", "hates", "hated", "agreed",
		"suggested", "joined", "left", "is", "was", "will", "has", "had", "can", "can't", "won't", "isn't",
		"wasn't", "doesn't", "didn't", "just", "finally", "also", "moved", "lives", "works", "got", "bought",
		"decided", "made", "wrote", "runs", "leads", "owns", "plays", "played", "streams", "needs", "knows",
		"and i", "and me"}
	// placeBefore: "in Osaka", "from Lyon", "moved to Berlin", "trip to Kyoto".
	placeBefore = []string{"in", "from", "near", "around", "visit", "visiting", "visited", "moved to",
		"moving to", "move to", "trip to", "flight to", "flying to", "fly to", "flew to", "travel to",
		"traveling to", "travelling to", "went to", "going to", "go to", "drive to", "driving to", "back to",
		"heading to", "headed to", "based in", "born in", "live in", "lives in", "living in", "out of"}
	// gameBefore: "playing Valheim", "a round of Tetris".
	gameBefore = []string{"play", "playing", "played", "plays", "replaying", "grinding", "speedrunning",
		"speedrun", "stream", "streaming", "streamed", "round of", "match of", "game of", "raid in", "modding",
		"modded", "install", "installed", "installing"}
	// gameAfter: "Valheim server", "Minecraft world".
	gameAfter = []string{"server", "world", "raid", "raids", "match", "matches", "lobby", "speedrun", "mod",
		"mods", "save", "seed", "ranked", "patch", "season", "tournament", "guild", "clan"}
	// titleBefore: "watching Frieren", "the book Dune".
	titleBefore = []string{"watch", "watching", "watched", "rewatch", "rewatching", "binge", "binging",
		"bingeing", "read", "reading", "listen to", "listening to", "listened to", "the movie", "the film",
		"the show", "the series", "the book", "the novel", "the anime", "the manga", "the album", "the song",
		"the podcast", "episode of", "season of", "chapter of", "a movie called", "a book called",
		"a show called", "a film called", "a series called", "an anime called", "titled"}
	// titleAfter: "Frieren season 2", "Dune part two".
	titleAfter = []string{"season", "episode", "episodes", "chapter", "chapters", "volume", "movie", "film",
		"book", "novel", "anime", "manga", "album", "soundtrack", "ost", "trilogy"}
	// projectBefore: "project Falcon", "the Falcon repo" is projectAfter.
	projectBefore = []string{"project", "codename", "code name", "repo", "repository"}
	// projectAfter: "Falcon project", "Falcon repo".
	projectAfter = []string{"project", "repo", "repository", "codebase", "rewrite", "roadmap", "milestone",
		"sprint", "backlog", "release", "launch", "prototype", "mvp", "beta", "alpha"}
	// connectors may sit between capitalised words of one name ("Bank of Japan",
	// "Lord of the Rings", "Tears of the Kingdom").
	connectors = []string{"of", "the", "de", "da", "di", "du", "del", "la", "le", "von", "van", "der", "den", "y", "&", "and the"}
)

// places is a small gazetteer of places people mention in chat. Entries starting with "="
// must be capitalised as written; the others match in any case ("moving to osaka").
var places = []string{
	"Japan", "China", "Korea", "South Korea", "Taiwan", "Thailand", "Vietnam", "Singapore", "Malaysia",
	"Indonesia", "Philippines", "India", "Australia", "New Zealand", "Canada", "Mexico", "Brazil", "Argentina",
	"=Chile", "Peru", "France", "Germany", "Italy", "Spain", "Portugal", "Netherlands", "Belgium", "Switzerland",
	"Austria", "Poland", "Sweden", "Norway", "Finland", "Denmark", "Iceland", "Ireland", "England", "Scotland",
	"=Wales", "Britain", "Greece", "=Turkey", "Egypt", "Morocco", "Kenya", "Nigeria", "South Africa", "Russia",
	"Ukraine", "=UK", "=USA", "=US", "=EU", "United States", "United Kingdom", "Europe", "Asia", "Africa",
	"Tokyo", "Osaka", "Kyoto", "Nara", "Kobe", "Yokohama", "Nagoya", "Sapporo", "Fukuoka", "Sendai", "Hiroshima",
	"Okinawa", "Hokkaido", "Kyushu", "Shibuya", "Shinjuku", "Akihabara", "Ikebukuro", "Harajuku", "Seoul",
	"Busan", "Beijing", "Shanghai", "Hong Kong", "Taipei", "Bangkok", "Hanoi", "Manila", "Jakarta", "Mumbai",
	"Delhi", "Bangalore", "Sydney", "Melbourne", "Auckland", "London", "Paris", "Berlin", "Munich", "Hamburg",
	"Madrid", "Barcelona", "Lisbon", "Rome", "Milan", "Venice", "Florence", "Amsterdam", "Brussels", "Vienna",
	"Prague", "Warsaw", "Stockholm", "Oslo", "Helsinki", "Copenhagen", "Dublin", "Edinburgh", "Manchester",
	"Zurich", "Geneva", "Athens", "Istanbul", "Cairo", "Lyon", "Marseille", "New York", "NYC", "Los Angeles",
	"San Francisco", "Seattle", "Portland", "Chicago", "Boston", "Austin", "Denver", "Miami", "Toronto",
	"Vancouver", "Montreal", "Mexico City", "Honolulu", "Hawaii", "California", "Texas", "Bay Area",
}

// games is a small gazetteer of games; "=" entries must be capitalised as written.
var games = []string{
	"Minecraft", "Valorant", "Fortnite", "Overwatch", "Overwatch 2", "League of Legends", "Apex Legends",
	"=Apex", "Elden Ring", "Dark Souls", "Zelda", "Breath of the Wild", "Tears of the Kingdom", "Pokemon",
	"Pokémon", "Splatoon", "Splatoon 3", "Mario Kart", "Smash Bros", "Super Smash Bros", "Animal Crossing",
	"Stardew Valley", "Terraria", "Factorio", "Satisfactory", "Genshin Impact", "=Genshin", "Final Fantasy",
	"Final Fantasy XIV", "FFXIV", "Monster Hunter", "Monster Hunter World", "=Destiny", "Destiny 2",
	"Counter-Strike", "CS2", "=CS:GO", "Dota", "Dota 2", "=Hades", "Hollow Knight", "Celeste", "Among Us",
	"Rocket League", "Baldur's Gate", "Baldur's Gate 3", "Cyberpunk", "Cyberpunk 2077", "The Witcher",
	"The Witcher 3", "Skyrim", "Tetris", "Street Fighter", "Street Fighter 6", "Tekken", "=Persona", "Persona 5",
	"Deep Rock Galactic", "Lethal Company", "Palworld", "Helldivers", "Helldivers 2", "=Civilization",
	"Civ 6", "=Portal", "Portal 2", "Valheim", "Phasmophobia", "Hearthstone", "World of Warcraft",
	"=WoW", "Diablo", "Diablo 4", "Path of Exile", "Warframe", "Roblox", "Osu", "osu!", "Balatro",
	"Slay the Spire", "Hollow Knight Silksong", "Silksong", "Mario", "Super Mario", "Kirby", "Metroid",
	"Fire Emblem", "Xenoblade", "Ghost of Tsushima", "Sekiro", "Bloodborne", "Armored Core", "Dragon Quest",
	"Outer Wilds", "Subnautica", "No Man's Sky", "Sea of Thieves", "GTA", "GTA V", "Red Dead Redemption",
	"Hogwarts Legacy", "Starfield", "=Fallout", "Fallout 4", "Mahjong Soul", "Umamusume", "Blue Archive",
	"Honkai Star Rail", "Star Rail", "Zenless Zone Zero", "Arknights", "Tarkov", "Escape from Tarkov",
	"Rainbow Six Siege", "=Siege", "PUBG", "=Smash",
}

// titles is a small gazetteer of shows, books and films often named without a cue.
var titles = []string{
	"Frieren", "One Piece", "Naruto", "=Bleach", "Jujutsu Kaisen", "Demon Slayer", "Attack on Titan",
	"Spy x Family", "Chainsaw Man", "Dungeon Meshi", "Delicious in Dungeon", "Oshi no Ko", "Bocchi the Rock",
	"Evangelion", "Spirited Away", "Totoro", "My Neighbor Totoro", "Princess Mononoke", "=Your Name",
	"=Dune", "Lord of the Rings", "The Lord of the Rings", "Harry Potter", "Star Wars", "Star Trek",
	"Breaking Bad", "Better Call Saul", "=The Office", "=Severance", "=Arcane", "The Expanse", "=Succession",
	"Stranger Things", "Game of Thrones", "=The Bear", "Blue Eye Samurai", "Cowboy Bebop", "Mushishi",
}

// projectWords are tools and platforms that come up in chat; they are entities of kind
// other, matched in any case when listed without "=".
var projectWords = []string{
	"GitHub", "GitLab", "Discord", "=Slack", "=Notion", "Figma", "Jira", "Trello", "Postgres", "PostgreSQL",
	"SQLite", "MySQL", "Redis", "Kafka", "Kubernetes", "Docker", "Terraform", "Grafana", "Prometheus",
	"TypeScript", "JavaScript", "Python", "Golang", "Kotlin", "=Swift", "=Rust", "Rails", "Django",
	"=React", "Vue", "Svelte", "Node.js", "Deno", "Linux", "Ubuntu", "Debian", "=Windows", "macOS", "Android",
	"iOS", "=Steam", "Twitch", "YouTube", "Twitter", "Bluesky", "Mastodon", "Reddit", "Spotify", "Netflix",
	"=Obsidian", "VS Code", "Neovim", "Vim", "Emacs", "AWS", "GCP", "Azure", "Vercel", "Cloudflare", "OpenAI",
	"Ollama", "ChatGPT", "=Zoom", "Google Meet", "Google Docs", "=Excel", "Photoshop", "Blender",
	"=Unity", "=Unreal", "Godot",
}

// Japanese vocabulary.
var (
	// honorificsJA follow a name: 田中さん, ケンくん, Kateちゃん, 山田先生.
	honorificsJA = []string{"さん", "くん", "ちゃん", "さま", "様", "君", "先生", "先輩", "氏", "殿", "たん", "っち",
		"部長", "課長", "社長", "係長", "店長", "監督", "選手", "教授", "博士"}
	// notNamesJA are words that take an honorific without being a name (お父さん, 皆さん,
	// 店員さん): kinship, "everyone", roles.
	notNamesJA = []string{"父", "母", "兄", "姉", "弟", "妹", "皆", "奥", "娘", "息子", "爺", "婆", "祖父", "祖母",
		"叔父", "叔母", "伯父", "伯母", "店員", "運転手", "大家", "医者", "神", "王", "姫", "客", "お客", "患者",
		"先生", "先輩", "後輩", "彼", "彼女", "相手", "本人", "担当", "担当者", "管理人", "社長", "部長", "課長",
		"隣", "近所", "赤", "猫", "犬", "皆様", "各位", "誰", "どなた", "みな", "みんな", "お前", "自分", "おじ",
		"おば", "おじい", "おばあ", "お兄", "お姉", "じい", "ばあ", "にい", "ねえ", "ママ", "パパ", "オーナー",
		"スタッフ", "ドライバー", "マネージャー", "リーダー", "メンバー", "ゲスト", "ファン", "ユーザー",
		"今日", "昨日", "明日", "今"}
	// timeWordsJA often run into a following name in one kanji run (今日田中さん).
	timeWordsJA = []string{"今日", "昨日", "明日", "明後日", "一昨日", "毎日", "今週", "来週", "先週", "今月",
		"来月", "先月", "今年", "来年", "去年", "今回", "前回", "次回", "今朝", "今夜", "今晩", "毎週", "週末"}
	// katakanaCommon are loanwords written in katakana that are ordinary nouns, not names.
	katakanaCommon = []string{
		"コーヒー", "ゲーム", "サーバー", "サーバ", "チャンネル", "メッセージ", "ミーティング", "プロジェクト", "チーム",
		"メンバー", "イベント", "パーティー", "パーティ", "レストラン", "カフェ", "ラーメン", "ピザ", "ビール", "ワイン",
		"ケーキ", "チョコ", "チョコレート", "アイス", "パン", "テスト", "バグ", "コード", "リリース", "デプロイ", "データ",
		"ファイル", "リンク", "スクショ", "ボイス", "ボイスチャット", "ボイチャ", "チャット", "ログ", "ツール", "アプリ",
		"サイト", "ページ", "ブログ", "ニュース", "スケジュール", "タスク", "レビュー", "プレゼン", "スライド", "メモ",
		"ノート", "ペン", "パソコン", "スマホ", "ランク", "レベル", "キャラ", "キャラクター", "スキン", "アップデート",
		"アプデ", "パッチ", "シーズン", "マップ", "ボス", "ダンジョン", "ガチャ", "イラスト", "アニメ", "マンガ", "ドラマ",
		"ライブ", "コンサート", "チケット", "ホテル", "バス", "タクシー", "ホーム", "オフィス", "リモート", "オンライン",
		"オフライン", "メール", "パスワード", "アカウント", "ユーザー", "ボット", "ロール", "バージョン", "エラー",
		"システム", "ルール", "トピック", "テーマ", "アイデア", "アイディア", "プラン", "コスト", "スタート", "ゴール",
		"ポイント", "タイム", "ミス", "オッケー", "オーケー", "ベース", "ドラム", "ギター", "ピアノ", "バンド", "カラオケ",
		"スポーツ", "サッカー", "テニス", "ゴルフ", "ジム", "ヨガ", "ダイエット", "プール", "ビーチ", "キャンプ",
		"ピクニック", "バーベキュー", "パスタ", "カレー", "サラダ", "スープ", "ジュース", "コーラ", "ミルク", "チーズ",
		"トマト", "ベッド", "ソファ", "テレビ", "ラジオ", "カメラ", "コントローラー", "マウス", "キーボード", "モニター",
		"ディスプレイ", "ヘッドホン", "イヤホン", "マイク", "スピーカー", "ネット", "ウェブ", "クラウド", "セール",
		"ショップ", "コンビニ", "スーパー", "デパート", "ランチ", "ディナー", "モーニング", "デート", "クリスマス",
		"ハロウィン", "バレンタイン", "タイプ", "グループ", "リーダー", "マネージャー", "エンジニア", "デザイナー",
		"プログラマー", "フロントエンド", "バックエンド", "インフラ", "ドキュメント", "ブランチ", "マージ", "プルリク",
		"コミット", "ビルド", "ライブラリ", "フレームワーク", "データベース", "クエリ", "インデックス", "キャッシュ",
		"メモリ", "ストレージ", "ネットワーク", "セキュリティ", "パフォーマンス", "ホスト", "ドメイン", "トークン",
		"キー", "ボタン", "メニュー", "コマンド", "オプション", "モード", "ステータス", "ヘルプ", "サポート",
		"フィードバック", "アンケート", "ストリーム", "クリップ", "ゲスト", "ファン", "フォロワー", "リスト",
		"ランキング", "トーナメント", "マッチ", "ラウンド", "スコア", "ルーム", "ロビー", "ギルド", "クラン", "クエスト",
		"アイテム", "スキル", "ガイド", "ルート", "ペース", "ミッション", "シナリオ", "ストーリー", "エピソード", "シリーズ",
		"スタジオ", "プレイ", "プレー", "オンラインゲーム", "ソシャゲ", "スマホゲー", "エンジン", "ライセンス",
		"コメント", "スタンプ", "アイコン", "プロフィール", "サムネ", "サムネイル", "スレッド", "リプ", "リプライ",
		"ツイート", "ポスト", "フォロー", "ブロック", "ミュート", "ピン", "メンション", "リアクション", "ロック",
		"シフト", "バイト", "アルバイト", "パート", "ボーナス", "ローン", "カード", "ポイントカード", "レシート",
		"ケース", "パターン", "レベルアップ", "ノルマ", "ペア", "ソロ", "マルチ", "フレンド", "パーティプレイ",
		"チーズケーキ", "ドーナツ", "クッキー", "サンドイッチ", "ハンバーガー", "ポテト", "フライドポテト", "ステーキ",
		"ソース", "ドレッシング", "スイーツ", "デザート", "ココア", "ティー", "ミルクティー", "ラテ", "カフェラテ",
		"エスプレッソ", "ソーダ", "ハイボール", "カクテル", "ウイスキー", "サワー", "チューハイ", "ビデオ", "オーディオ",
		"ゲーム機", "ソフト", "ハード", "ダウンロード", "インストール", "アンインストール", "ログイン", "ログアウト",
		"セットアップ", "バックアップ", "リストア", "メンテ", "メンテナンス", "アップ", "ダウン", "オン", "オフ",
		"イン", "アウト", "ゲームパス", "サブスク", "プレミアム", "フリー", "トライアル", "デモ", "ベータ", "アルファ",
		"ゼロ", "ワン", "ツー", "スリー", "トップ", "ボトム", "サイド", "センター", "ライン", "エリア", "ゾーン",
		"スペース", "ルームメイト", "ルームツアー", "ミート", "ミートアップ", "オフ会", "パン屋", "ケーキ屋", "オッケ",
		"ワンピース", "シャツ", "ジャケット", "コート", "バッグ", "スニーカー", "ジーンズ", "メガネ", "マスク",
		"フェス", "モデレーター", "モデレーション", "レッスン", "プレゼント", "スクリプト", "アドミン", "プレイヤー", "ギフト", "セミナー", "ワークショップ", "トレーニング", "イベント告知", "ゲーマー", "ストリーマー", "ユーチューバー", "ブロガー", "クリエイター", "アーティスト", "ミュージシャン",
		"エピック", "レア", "ノーマル", "ハード", "イージー", "ベリーハード", "ランダム", "ボイスメモ", "ワード",
		"エクセル", "パワポ", "ゲームセンター", "ゲーセン", "カラオケボックス", "コーナー", "スケジュール表",
	}
	// placesJA are places written in Japanese, matched inside kanji and kana runs.
	placesJA = []string{"東京", "大阪", "京都", "奈良", "神戸", "横浜", "名古屋", "札幌", "福岡", "仙台", "広島", "沖縄",
		"北海道", "九州", "四国", "渋谷", "新宿", "池袋", "秋葉原", "原宿", "銀座", "浅草", "品川", "梅田", "難波",
		"博多", "鎌倉", "箱根", "日光", "金沢", "長野", "静岡", "千葉", "埼玉", "神奈川", "日本", "韓国", "中国", "台湾",
		"アメリカ", "イギリス", "フランス", "ドイツ", "イタリア", "スペイン", "カナダ", "オーストラリア", "タイ",
		"ベトナム", "シンガポール", "ロンドン", "パリ", "ニューヨーク", "ソウル", "台北", "上海", "北京", "ベルリン",
		"ハワイ", "ヨーロッパ", "アジア", "ロサンゼルス", "サンフランシスコ", "シアトル", "バンコク"}
	// gamesJA are games written in Japanese.
	gamesJA = []string{"マインクラフト", "マイクラ", "ポケモン", "ポケットモンスター", "スプラトゥーン", "スプラ", "ゼルダ",
		"モンハン", "モンスターハンター", "フォートナイト", "ヴァロラント", "ヴァロ", "エーペックス", "エペ", "原神",
		"鉄拳", "ドラクエ", "ドラゴンクエスト", "ファイナルファンタジー", "エルデンリング", "スマブラ", "マリカ",
		"マリオカート", "どうぶつの森", "あつ森", "スターデューバレー", "テラリア", "ウマ娘", "崩壊スターレイル",
		"スタレ", "ブルアカ", "ブルーアーカイブ", "雀魂", "麻雀", "桃鉄", "テトリス", "ストリートファイター", "スト6",
		"オーバーウォッチ", "リーグオブレジェンド", "ロル", "デッドバイデイライト", "デドバ", "アモングアス", "バルダーズゲート"}
	// titlesJA are shows and books written in Japanese.
	titlesJA = []string{"葬送のフリーレン", "フリーレン", "呪術廻戦", "鬼滅の刃", "進撃の巨人", "推しの子", "ぼっち・ざ・ろっく",
		"ダンジョン飯", "ワンピース", "ナルト", "エヴァ", "千と千尋の神隠し", "となりのトトロ", "君の名は"}
	// placeAfterJA follow a place: 大阪に行く, パリ出身.
	placeAfterJA = []string{"に行", "へ行", "に住", "に引っ越", "へ引っ越", "出身", "旅行", "に旅", "に着", "から来",
		"駅", "まで行", "に帰", "へ帰"}
	// gameAfterJA follow a game: 原神をプレイ, マイクラやろう.
	gameAfterJA = []string{"をプレイ", "を遊", "で遊", "をやって", "やろう", "をやろう", "やってる", "のサーバ",
		"のランク", "で遊ぼ", "のイベント", "の新シーズン", "のアプデ", "をクリア", "クリアした"}
	// titleCueJA follow a quoted title: 「…」を見た, 『…』を読んだ, 「…」って映画.
	titleCueJA = []string{"を見", "をみ", "を観", "を読", "をよ", "を聴", "を聞", "って映画", "という映画",
		"って本", "という本", "ってアニメ", "というアニメ", "って漫画", "という漫画", "ってゲーム", "というゲーム",
		"って曲", "という曲", "の続編", "の新刊", "の映画", "のアニメ", "の最新", "が好き", "がおすすめ",
		"を買", "をプレイ", "の二期", "の2期", "の最終回", "の原作", "のOP", "のED"}
	// speechCueJA follow quoted speech, not a title: 「了解」と言った.
	speechCueJA = []string{"と言", "とい", "って言", "と思", "って思", "と聞", "って聞", "と返", "って返", "と書",
		"って書", "と叫", "とのこと", "だって", "らしい"}
	// projectJA: プロジェクトX, Xプロジェクト.
	projectJA = []string{"プロジェクト", "計画"}
)

// Decision language: the phrases that make a memory a decision someone took. Words are
// matched whole and in order, case-insensitively, with apostrophes dropped ("we'll" is
// "well"); "…" stands for a gap of one to six words and a trailing "*" for any ending
// ("prefer*" is prefer, prefers, preferred).
var decisionPhrasesEN = []string{
	"we decided", "weve decided", "we have decided", "we had decided", "i decided", "ive decided",
	"i have decided", "they decided", "theyve decided", "team decided", "everyone decided", "decided to",
	"decided on", "decided that", "decided against", "the decision is", "the decision was", "final decision",
	"its decided", "it is decided", "its been decided", "decision made", "well use", "we will use",
	"well go with", "we will go with", "were going with", "we are going with", "lets go with",
	"lets use", "lets stick with", "well stick with", "we will stick with", "were sticking with", "well stay with",
	"switched from … to", "switching from … to", "switch from … to", "moved from … to", "moving from … to",
	"migrated from … to", "migrating from … to", "switched to", "switching to", "weve switched", "we switched",
	"prefer* … over", "prefer* … rather than", "chose … over", "chosen … over", "picked … over", "we chose",
	"we picked", "we agreed", "agreed to", "agreed on", "agreed that", "settled on", "we settled", "opted for",
	"from now on", "going forward", "the plan is", "the rule is", "we voted", "voted for", "we approved",
	"approved the", "we committed to", "locked in", "were locking in", "confirmed that we",
}

// decisionNegatorsEN before a decision phrase undo it: "we haven't decided", "not going
// with", "still deciding whether".
var decisionNegatorsEN = []string{"not", "havent", "hasnt", "hadnt", "didnt", "dont", "never", "undecided",
	"yet", "if", "whether", "should", "maybe", "might", "could", "would", "wont", "cant", "unless", "before"}

// decisionPhrasesJA are Japanese decision phrases, matched as substrings of a clause.
var decisionPhrasesJA = []string{
	"決めた", "決めました", "決めてる", "決めている", "決定した", "決定しました", "決定です", "に決定", "で決定",
	"決まった", "決まりました", "決まりです", "に決まり", "で決まり", "にしよう", "にしましょう", "にします", "にした",
	"にしました", "ことにした", "ことにしました", "ことにする", "ことになった", "ことになりました", "で行こう",
	"でいこう", "で行きましょう", "でいきましょう", "で行く", "でいく", "を使うことに", "に切り替え", "に切り替えた",
	"に変更した", "に変更しました", "に変えた", "に変えました", "に乗り換え", "へ移行", "に移行", "を採用",
	"で合意", "に合意", "と合意", "より…の方が好き", "より…のほうが好き", "より…がいい", "今後は", "これからは",
}

// decisionBlockersJA make a match not a decision: wanting or hoping to decide (決めたい),
// a condition (決めたら), not decided yet (まだ決めて, 決まってない, 未決定).
var decisionBlockersJA = []string{"決めたい", "決めたら", "決めたほう", "決めた方", "決めたか", "決まったら",
	"決まってない", "決まっていない", "決まってません", "決めてない", "決めていない", "未決定", "まだ決", "決まるまで",
	"決めようか", "しようか", "しましょうか", "するか", "にしようかな", "にしようかと", "にしたい", "にしたら",
	"ことにしたい", "でいこうか", "で行こうか", "かどうか", "気にした", "気にしました", "気にします", "気にしよう",
	"大事にした", "大切にした", "バカにした", "馬鹿にした", "にしたい", "にしたら", "ことにした方"}
