package i18n

// Replies of the slash commands and the errors every command may show.
func init() {
	Register(map[Key]Text{
		// The router and permission checks.
		"error.restarting":      {EN: "kioku is restarting; please try again in a minute.", JA: "kiokuは再起動中です。1分ほどしてからもう一度お試しください。"},
		"error.unknown_command": {EN: "I don't know that command (yet). It may be from a newer or older version of kioku.", JA: "そのコマンドは(まだ)知りません。新しい、または古いバージョンのkiokuのものかもしれません。"},
		"error.timeout":         {EN: "Sorry, that took too long. Please try again.", JA: "すみません、時間がかかりすぎました。もう一度お試しください。"},
		"error.no_guild":        {EN: "This command only works in a server.", JA: "このコマンドはサーバー内でのみ使えます。"},
		"error.server_editor":   {EN: "Changing this server's memory needs the Manage Server permission. You can still keep personal memories with scope:personal.", JA: "このサーバーの記憶を変更するには「サーバー管理」権限が必要です。scope:personal で個人の記憶は保存できます。"},
		"error.server_editor.role": {EN: "Changing this server's memory needs the Manage Server permission or the <@&%s> role. You can still keep personal memories with scope:personal.",
			JA: "このサーバーの記憶を変更するには「サーバー管理」権限か <@&%s> ロールが必要です。scope:personal で個人の記憶は保存できます。"},
		"error.manager":        {EN: "This needs the Manage Server permission.", JA: "これには「サーバー管理」権限が必要です。"},
		"error.privacy_full":   {EN: "Your privacy level is full, so I keep nothing about you, not even by command. Use /privacy level:normal to change that.", JA: "プライバシーレベルが full のため、コマンドでもあなたについて何も保存しません。変更するには /privacy level:normal を使ってください。"},
		"error.server_in_dm":   {EN: "In DMs only your personal memory exists; use this command in a server for its server memory.", JA: "DMには個人の記憶しかありません。サーバーの記憶はサーバー内でこのコマンドを使ってください。"},
		"error.scope":          {EN: "Unknown scope %q: use server or personal.", JA: "不明な範囲 %q です。server か personal を指定してください。"},
		"error.personal_owner": {EN: "Personal memories can only be changed by their owner.", JA: "個人の記憶を変更できるのは持ち主だけです。"},

		// Domain errors from the store, by code: shown to readers of other languages above
		// the English detail.
		"error.code.invalid":     {EN: "That input isn't valid.", JA: "入力が正しくありません。"},
		"error.code.not_found":   {EN: "I couldn't find that memory where you can see it.", JA: "あなたが見られる範囲にその記憶は見つかりませんでした。"},
		"error.code.conflict":    {EN: "That memory changed in the meantime, or it already exists.", JA: "その記憶はその間に変更されたか、すでに存在します。"},
		"error.code.forbidden":   {EN: "You may not do that here.", JA: "ここではその操作はできません。"},
		"error.code.not_deleted": {EN: "That memory isn't forgotten, so there is nothing to recover.", JA: "その記憶は忘れられていないので、復元するものはありません。"},
		"error.code.expired":     {EN: "That is too old now: the time to do it has passed.", JA: "期限が過ぎているため、もう実行できません。"},
		"error.code.limit":       {EN: "A limit was reached.", JA: "上限に達しました。"},
		"error.code.unavailable": {EN: "The database can't take changes right now; nothing was changed. Please try again later.", JA: "データベースが現在変更を受け付けていません。何も変更されていません。後でもう一度お試しください。"},
		"error.code.internal":    {EN: "Something went wrong on my side; the error is logged for the admins.", JA: "内部でエラーが発生しました。管理者向けにログを記録しました。"},

		// /privacy
		"privacy.intro":         {EN: "Your privacy settings:", JA: "あなたのプライバシー設定:"},
		"privacy.updated":       {EN: "Updated your %s.", JA: "%sを更新しました。"},
		"privacy.and":           {EN: " and ", JA: "と"},
		"privacy.changed.level": {EN: "privacy level", JA: "プライバシーレベル"},
		"privacy.changed.cross": {EN: "cross-server use", JA: "サーバー横断の利用"},
		"privacy.summary":       {EN: "%s\n**Level: %s.** %s\n%s", JA: "%s\n**レベル:%s。** %s\n%s"},
		"privacy.help.normal":   {EN: "I use your personal memories when we talk and may save new ones.", JA: "会話では個人の記憶を使い、新しく保存することもあります。"},
		"privacy.help.partial":  {EN: "I keep your personal memories out of my replies and don't save new ones on my own; you can still manage them by command.", JA: "返答に個人の記憶を使わず、自分から新しく保存もしません。コマンドでの管理はできます。"},
		"privacy.help.full":     {EN: "I ignore your messages and keep nothing, not even short-term. /memory forget and /memory export still work, and /memory forget-me erases what I already have.", JA: "あなたのメッセージを無視し、短期記憶も含め何も保持しません。/memory forget と /memory export は使え、/memory forget-me で既存の情報を消去できます。"},
		"privacy.cross.off":     {EN: "Your personal memories are used only in the server (or DM) where they were made.", JA: "個人の記憶は作られたサーバー(またはDM)でのみ使われます。"},
		"privacy.cross.on":      {EN: "Your personal memories are used in every server you talk to me in.", JA: "個人の記憶はあなたが私と話すすべてのサーバーで使われます。"},

		// /stm
		"stm.none":            {EN: "I hold no short-term memory about you right now.", JA: "今、あなたについての短期記憶はありません。"},
		"stm.title":           {EN: "Your short-term memory", JA: "あなたの短期記憶"},
		"stm.description":     {EN: "%s. Short-term memory expires on its own within a day; /stm clear drops it now.", JA: "%s。短期記憶は1日以内に自動で消えます。/stm clear で今すぐ消去できます。"},
		"stm.place.dm":        {EN: "Direct messages", JA: "ダイレクトメッセージ"},
		"stm.place.channel":   {EN: "Server %s, channel <#%s>", JA: "サーバー %s、チャンネル <#%s>"},
		"stm.summary":         {EN: "**Summary:** %s", JA: "**要約:** %s"},
		"stm.messages.one":    {EN: "%d message, expiring <t:%d:R>", JA: "メッセージ %d件、<t:%d:R>に期限切れ"},
		"stm.messages.other":  {EN: "%d messages, expiring <t:%d:R>", JA: "メッセージ %d件、<t:%d:R>に期限切れ"},
		"stm.you":             {EN: "you", JA: "あなた"},
		"stm.error.channel":   {EN: "Clearing a whole channel's short-term memory needs the Manage Server permission. /stm clear what:me clears yours.", JA: "チャンネル全体の短期記憶を消去するには「サーバー管理」権限が必要です。/stm clear what:me であなたの分を消去できます。"},
		"stm.cleared.channel": {EN: "Cleared this channel's short-term memory (%s).", JA: "このチャンネルの短期記憶を消去しました(%s)。"},
		"stm.cleared.me":      {EN: "Cleared your short-term memory (%s) and your messages in channels' short-term memory.", JA: "あなたの短期記憶(%s)と、チャンネルの短期記憶にあるあなたのメッセージを消去しました。"},

		// What the bot writes in a channel around a chat turn.
		"notice.saved":   {EN: "📌 Remembered (%s) #%d: %s", JA: "📌 記憶しました(%s)#%d:%s"},
		"notice.updated": {EN: "✏️ Updated #%d: %s", JA: "✏️ 更新しました #%d:%s"},
		"notice.deleted": {EN: "🗑️ Forgot #%d: %s", JA: "🗑️ 忘れました #%d:%s"},
		"turn.timeout":   {EN: "Sorry, that took me too long. Please try again in a moment.", JA: "すみません、時間がかかりすぎました。少ししてからもう一度お試しください。"},
		"turn.failed":    {EN: "Sorry, something went wrong on my side and I couldn't answer. The details are in the bot's logs.", JA: "すみません、内部でエラーが発生したため返答できませんでした。詳細はボットのログにあります。"},

		// Replies the chat engine writes itself (chat.Reply.Canned); English is the engine's.
		"turn.canned.model_down":   {EN: "Sorry, I can't reach my language model right now. Your message is saved; please try again in a moment.", JA: "すみません、今は言語モデルに接続できません。メッセージは保存しました。少ししてからもう一度お試しください。"},
		"turn.canned.model_slow":   {EN: "Sorry, my language model didn't answer in time. Your message is saved; please try again in a moment.", JA: "すみません、言語モデルが時間内に応答しませんでした。メッセージは保存しました。少ししてからもう一度お試しください。"},
		"turn.canned.exhausted":    {EN: "Sorry, I went around in circles with my memory tools and didn't get to an answer. Could you ask again, maybe more simply?", JA: "すみません、記憶ツールの操作が堂々巡りになり答えにたどり着けませんでした。もう少し簡単に聞き直してもらえますか?"},
		"turn.canned.empty":        {EN: "Sorry, I couldn't come up with a reply to that. Could you rephrase it?", JA: "すみません、うまく返答できませんでした。言い換えてもらえますか?"},
		"turn.canned.done":         {EN: "Done.", JA: "完了しました。"},
		"turn.canned.rate_limited": {EN: "You're sending messages faster than I can keep up with. Please wait about %d seconds and try again.", JA: "メッセージの送信が速すぎて追いつけません。%d秒ほど待ってからもう一度お試しください。"},
		"turn.canned.guild_rate":   {EN: "This server is sending me more messages than I can keep up with. Please wait about %d seconds and try again.", JA: "このサーバーからのメッセージが多すぎて追いつけません。%d秒ほど待ってからもう一度お試しください。"},
		"turn.canned.budget_guild": {EN: "This server's daily model budget is used up; it resets at 00:00 UTC.", JA: "このサーバーの1日のモデル利用枠を使い切りました。00:00 UTC(日本時間 9:00)にリセットされます。"},
		"turn.canned.budget_dm":    {EN: "Your daily model budget for DMs is used up; it resets at 00:00 UTC.", JA: "DMでの1日のモデル利用枠を使い切りました。00:00 UTC(日本時間 9:00)にリセットされます。"},
		"turn.busy":                {EN: "I'm busy right now, please try again in a moment.", JA: "ただいま混み合っています。少ししてからもう一度お試しください。"},
		"turn.restarting":          {EN: "kioku is restarting; please send that again in a minute.", JA: "kiokuは再起動中です。1分ほどしてからもう一度送ってください。"},

		// /kioku jobs
		"jobs.error.state":    {EN: "Unknown state %q: use due, running, dead, done or all.", JA: "不明な状態 %q です。due、running、dead、done、all のいずれかを指定してください。"},
		"jobs.title":          {EN: "Background jobs in this server", JA: "このサーバーのバックグラウンドジョブ"},
		"jobs.none":           {EN: "There are no background jobs for this server.", JA: "このサーバーのバックグラウンドジョブはありません。"},
		"jobs.none.state":     {EN: "There are no %s background jobs for this server.", JA: "このサーバーに「%s」のバックグラウンドジョブはありません。"},
		"jobs.footer.newest":  {EN: "Newest first.", JA: "新しい順。"},
		"jobs.footer.limit":   {EN: "The %d newest, newest first.", JA: "新しい順に最新%d件。"},
		"jobs.footer.dead":    {EN: "A dead job failed for good; the bot's operator can run it again with kioku jobs requeue.", JA: "dead のジョブは最終的に失敗したものです。ボットの運用者が kioku jobs requeue で再実行できます。"},
		"jobs.attempts.one":   {EN: "%[2]d/%[1]d attempt", JA: "試行 %[2]d/%[1]d"},
		"jobs.attempts.other": {EN: "%[2]d/%[1]d attempts", JA: "試行 %[2]d/%[1]d"},
		"jobs.runs_at":        {EN: "runs <t:%d:R>", JA: "<t:%d:R>に実行"},
		"jobs.runs_now":       {EN: "runs now", JA: "まもなく実行"},
		"jobs.last_error":     {EN: "last error: %s", JA: "直近のエラー:%s"},

		// /memory export and import
		"transfer.exported.one":     {EN: "Here is %[1]d memory from %[2]s. /memory import accepts this file.", JA: "%[2]sの記憶 %[1]d件です。/memory import でこのファイルを取り込めます。"},
		"transfer.exported.other":   {EN: "Here are %[1]d memories from %[2]s. /memory import accepts this file.", JA: "%[2]sの記憶 %[1]d件です。/memory import でこのファイルを取り込めます。"},
		"transfer.imported.one":     {EN: "📥 Imported %[1]d memory into %[2]s.", JA: "📥 %[2]sに記憶 %[1]d件を取り込みました。"},
		"transfer.imported.other":   {EN: "📥 Imported %[1]d memories into %[2]s.", JA: "📥 %[2]sに記憶 %[1]d件を取り込みました。"},
		"transfer.duplicates.one":   {EN: "%d was already there and was skipped.", JA: "%d件は既にあったため飛ばしました。"},
		"transfer.duplicates.other": {EN: "%d were already there and were skipped.", JA: "%d件は既にあったため飛ばしました。"},
		"transfer.similar.one":      {EN: "%d says again in other words what a memory already said; it waits in /memory review.", JA: "%d件は既存の記憶と同じ内容を別の言葉で述べています。/memory review で確認できます。"},
		"transfer.similar.other":    {EN: "%d say again in other words what memories already said; they wait in /memory review.", JA: "%d件は既存の記憶と同じ内容を別の言葉で述べています。/memory review で確認できます。"},
		"transfer.error.no_file":    {EN: "Attach the export file with file:.", JA: "file: でエクスポートファイルを添付してください。"},
		"transfer.error.too_big":    {EN: "That file is %s; an import can be at most %s.", JA: "そのファイルは %s です。取り込めるのは最大 %s までです。"},
		"transfer.error.empty":      {EN: "That export file holds no memories; nothing to import.", JA: "そのエクスポートファイルには記憶がありません。取り込むものはありません。"},
		"transfer.error.address":    {EN: "That attachment has an invalid address.", JA: "その添付ファイルのアドレスが正しくありません。"},
		"transfer.error.larger":     {EN: "That file is larger than %s, the most an import can be.", JA: "そのファイルは取り込める上限の %s を超えています。"},
	})
}
