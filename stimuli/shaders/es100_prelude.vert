#define attribute in
#define varying out
