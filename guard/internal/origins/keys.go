package origins

// The value shapes below are asked of every argument leaf and every field
// of every result, so each checks what its pattern cannot do without
// (an @, a scheme, a leading digit) before it runs the regexp engine.
