package bot

// FitEmbed exposes fitEmbed to the tests.
var FitEmbed = fitEmbed
