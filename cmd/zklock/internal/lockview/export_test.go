package lockview

// LocalNext is localNext, for the external tests.
var LocalNext = localNext
